"""envhub's gymnax backend vs gymnax called directly: CartPole-v1, jitted lax.scan, batched.

Both loops do the same work per step: split the key, sample random actions, step every
environment (with gymnax's same-step auto-reset) and accumulate reward and episode ends.

    python benchmarks/gymnax_cartpole.py [--num-envs 1024] [--steps 1000] [--repeats 9]
"""

from __future__ import annotations

import argparse

import gymnax
import jax
from _timing import interleaved_medians

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
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()

    key = jax.random.key(0)
    runs = {
        "gymnax (raw)": raw_gymnax_rollout(args.num_envs, args.steps),
        "envhub": envhub_rollout(args.num_envs, args.steps),
    }
    outputs = {name: jax.block_until_ready(run(key)) for name, run in runs.items()}  # compile
    total_raw, total_hub = float(outputs["gymnax (raw)"][0]), float(outputs["envhub"][0])
    print(f"same work: total reward raw={total_raw:.0f} envhub={total_hub:.0f}")

    medians = interleaved_medians(
        {n: (lambda r=r: jax.block_until_ready(r(key))) for n, r in runs.items()}, args.repeats
    )
    env_steps = args.num_envs * args.steps
    print(
        f"CartPole-v1, num_envs={args.num_envs}, {args.steps} scan steps, median of {args.repeats} "
        f"(jax {jax.__version__}, {jax.devices()[0].platform})"
    )
    for name, seconds in medians.items():
        print(f"  {name:<14} {seconds * 1e3:8.1f} ms   {env_steps / seconds / 1e6:6.2f} M steps/s")
    print(f"ratio envhub / raw gymnax throughput: {medians['gymnax (raw)'] / medians['envhub']:.3f}  (target >= 0.95)")


if __name__ == "__main__":
    main()
