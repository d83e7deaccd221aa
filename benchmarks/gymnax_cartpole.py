"""envhub's gymnax backend vs gymnax called directly: CartPole-v1, jitted lax.scan, batched.

Both loops do the same work per step: split the key, sample random actions, step every
environment (with gymnax's same-step auto-reset) and accumulate reward and episode ends.

    python benchmarks/gymnax_cartpole.py [--num-envs 1,64,1024] [--steps 1000] [--repeats 9] [--json out.json]
"""

from __future__ import annotations

import argparse

import gymnax
import jax
from _timing import comparison_row, first_call_seconds, interleaved_medians, write_json

import envhub


def raw_gymnax_rollout(num_envs: int, steps: int):
    env, params = gymnax.make("CartPole-v1")
    reset = jax.vmap(env.reset, in_axes=(0, None))
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        _, state = reset(jax.random.split(init_key, num_envs), params)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            actions = jax.random.randint(action_key, (num_envs,), 0, 2)
            _, state, reward, terminated, truncated, _ = step(
                jax.random.split(step_key, num_envs), state, actions, params
            )
            return (state, total + reward.sum(), ends + (terminated | truncated).sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def envhub_rollout(num_envs: int, steps: int):
    env = envhub.make("gymnax/CartPole-v1", num_envs=num_envs)

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            actions = jax.random.randint(action_key, (num_envs,), 0, 2)
            state, ts = env.step(step_key, state, actions)
            return (state, total + ts.reward.sum(), ends + ts.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", default="1024", help="comma-separated batch sizes")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    args = parser.parse_args()

    key = jax.random.key(0)
    rows = []
    print(
        f"CartPole-v1, {args.steps} scan steps, median of {args.repeats} interleaved repeats "
        f"(jax {jax.__version__}, {jax.devices()[0].platform})"
    )
    for num_envs in [int(n) for n in args.num_envs.split(",")]:
        runs = {
            "gymnax (raw)": raw_gymnax_rollout(num_envs, args.steps),
            "envhub": envhub_rollout(num_envs, args.steps),
        }
        compiles = {name: first_call_seconds(lambda r=run: r(key)) for name, run in runs.items()}
        totals = {name: float(run(key)[0]) for name, run in runs.items()}
        assert totals["envhub"] == totals["gymnax (raw)"], f"not the same work: {totals}"
        medians = interleaved_medians(
            {n: (lambda r=r: jax.block_until_ready(r(key))) for n, r in runs.items()}, args.repeats
        )
        row = comparison_row("gymnax", "CartPole-v1", num_envs, args.steps, medians, compiles, "envhub", "gymnax (raw)")
        rows.append(row)
        print(
            f"  num_envs={num_envs:<6} raw {row['raw_steps_per_s'] / 1e6:7.3f} M/s   envhub {row['envhub_steps_per_s'] / 1e6:7.3f} M/s"
            f"   ratio {row['ratio']:.3f} (target >= 0.95)   compile raw {row['raw_compile_s']:.2f}s envhub {row['envhub_compile_s']:.2f}s"
        )
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
