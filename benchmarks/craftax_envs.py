"""envhub's craftax backend vs craftax called directly: jitted lax.scan of a batch, ratios in one run.

Both loops do the same work per step: split the key, sample random actions, step every environment
with auto-reset and accumulate reward and episode ends. The raw loop is craftax's own auto-reset env
(``make_craftax_env_from_name(name, auto_reset=True)``, which also computes a reset on every step);
envhub's is ``envhub.make("craftax/<env>", num_envs=N)`` (same-step auto-reset, spare initial states).
A second baseline, hand-written from craftax's ``auto_reset=False`` env, resets the batch only on steps
where some environment is done (``lax.cond``), the scheme envhub's base uses; a third generates the
worlds of that reset 16 at a time (``lax.map``), as envhub does on CPU (``reset_chunk``): craftax's
vmapped world generation grows faster than the batch there (0.27 s for 64 envs, 112 s for 1024), so the
two baselines that vmap it over the whole batch are skipped above ``--vmapped-reset-max-envs``.

    python benchmarks/craftax_envs.py [--env Craftax-Classic-Symbolic-v1] [--num-envs 64,1024] [--steps 200]
        [--repeats 5] [--vmapped-reset-max-envs 256] [--json out.json]
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
from _timing import comparison_row, first_call_seconds, interleaved_medians, raw_random_rollout, write_json
from craftax.craftax_env import make_craftax_env_from_name

import envhub
from envhub.core.tree import select


def raw_craftax_rollout(name: str, num_envs: int, steps: int):
    env = make_craftax_env_from_name(name, auto_reset=True)
    params = env.default_params
    reset = jax.vmap(env.reset, in_axes=(0, None))
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def step_all(key, state, actions):
        _, state, reward, done, _ = step(jax.random.split(key, num_envs), state, actions, params)
        return state, reward, done

    return jax.jit(raw_random_rollout(lambda keys: reset(keys, params)[1], step_all, num_envs, env.num_actions, steps))


def cond_reset_craftax_rollout(name: str, num_envs: int, steps: int, chunk: int | None = None):
    env = make_craftax_env_from_name(name, auto_reset=False)
    params = env.default_params
    if chunk is None:
        reset = jax.vmap(env.reset_env, in_axes=(0, None))
    else:  # lax.map over chunks of `chunk` worlds

        def reset(keys, params):
            return jax.lax.map(lambda k: env.reset_env(k, params), keys, batch_size=chunk)

    step = jax.vmap(env.step_env, in_axes=(0, 0, 0, None))

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        _, state = reset(jax.random.split(init_key, num_envs), params)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key, reset_key = jax.random.split(key, 3)
            actions = jax.random.randint(action_key, (num_envs,), 0, env.num_actions)
            _, state, reward, done, _ = step(jax.random.split(step_key, num_envs), state, actions, params)
            state = jax.lax.cond(
                done.any(),
                lambda s: select(done, reset(jax.random.split(reset_key, num_envs), params)[1], s),
                lambda s: s,
                state,
            )
            return (state, total + reward.sum(), ends + done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, jnp.float32(0), 0), jax.random.split(key, steps))
        return total, ends

    return run


def envhub_rollout(name: str, num_envs: int, steps: int):
    env = envhub.make(f"craftax/{name}", num_envs=num_envs)
    num_actions = env.single_action_space.n

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            actions = jax.random.randint(action_key, (num_envs,), 0, num_actions)
            state, ts = env.step(step_key, state, actions)
            return (state, total + ts.reward.sum(), ends + ts.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, jnp.float32(0), 0), jax.random.split(key, steps))
        return total, ends

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="Craftax-Classic-Symbolic-v1")
    parser.add_argument("--num-envs", default="64,1024", help="comma-separated batch sizes")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--vmapped-reset-max-envs", type=int, default=256, help="skip vmapped-reset baselines above")
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    args = parser.parse_args()

    key = jax.random.key(0)
    rows = []
    print(
        f"craftax {args.env}, {args.steps} scan steps, median of {args.repeats} interleaved repeats "
        f"(jax {jax.__version__}, {jax.devices()[0].platform})"
    )
    for num_envs in [int(n) for n in args.num_envs.split(",")]:
        runs = {
            "craftax (cond reset, chunks of 16)": cond_reset_craftax_rollout(args.env, num_envs, args.steps, 16),
            "envhub": envhub_rollout(args.env, num_envs, args.steps),
        }
        if num_envs <= args.vmapped_reset_max_envs:
            runs["craftax (raw)"] = raw_craftax_rollout(args.env, num_envs, args.steps)
            runs["craftax (cond reset)"] = cond_reset_craftax_rollout(args.env, num_envs, args.steps)
        else:
            print(
                f"  num_envs={num_envs}: craftax (raw) and (cond reset) skipped: one vmapped reset takes minutes here"
            )
        compiles = {name: first_call_seconds(lambda r=run: r(key)) for name, run in runs.items()}
        ends = {name: int(run(key)[1]) for name, run in runs.items()}
        medians = interleaved_medians(
            {n: (lambda r=r: jax.block_until_ready(r(key))) for n, r in runs.items()}, args.repeats
        )
        for raw in [name for name in runs if name != "envhub"]:
            row = comparison_row("craftax", args.env, num_envs, args.steps, medians, compiles, "envhub", raw)
            rows.append({**row, "episode_ends": ends})
            print(
                f"  num_envs={num_envs:<6} {raw:<34} {row['raw_steps_per_s'] / 1e3:8.2f} k/s   envhub {row['envhub_steps_per_s'] / 1e3:8.2f} k/s"
                f"   ratio {row['ratio']:.3f} (target >= 0.95)   compile raw {row['raw_compile_s']:.1f}s envhub {row['envhub_compile_s']:.1f}s"
                f"   episode ends {ends}"
            )
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
