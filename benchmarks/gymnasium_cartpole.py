"""CartPole-v1 through envhub (jitted lax.scan) vs gymnasium's own vector env in a Python loop.

All three use the same gymnasium vector env: by default gymnasium's NumPy ``CartPoleVectorEnv``
(``--vectorization vector_entry_point``, what envhub builds for CartPole; gymnasium's loops run it
in its native next-step auto-reset, envhub in same-step), or the sync vector env in
``AutoresetMode.SAME_STEP`` (``--vectorization sync``):

- ``envhub scan``: ``envhub.make("gymnasium/CartPole-v1", num_envs=N)``; a linear softmax policy and
  ``env.step`` inside one jitted ``lax.scan`` (the host env is stepped through ``envhub.host.callback``:
  ``buffer_callback``, or ``io_callback`` with ``ENVHUB_HOST_CALLBACK=io_callback``).
- ``python loop``: ``envs.step`` in a Python loop with NumPy random actions (no policy at all).
- ``jax policy loop``: the same jitted JAX policy called each step around ``envs.step``, the usual
  way to drive a host env from JAX.

Run: ``python benchmarks/gymnasium_cartpole.py [--steps 500] [--repeats 7] [--num-envs 16,64]
[--vectorization vector_entry_point|sync] [--json out.json]``.
Prints the median time per vector step and each loop's speed relative to the two Python loops;
the loops run interleaved, so a busy machine slows them alike.
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from _timing import comparison_row, write_json

import envhub

W = jnp.asarray(np.random.default_rng(0).normal(size=(4, 2)), jnp.float32)


def policy(key: jax.Array, obs: jax.Array) -> jax.Array:
    return jax.random.categorical(key, obs @ W).astype(jnp.int32)


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def envhub_scan(n: int, steps: int, mode: str):
    env = envhub.make("gymnasium/CartPole-v1", num_envs=n, vectorization_mode=mode)

    def body(carry, key):
        state, obs = carry
        state, ts = env.step(key, state, policy(key, obs))
        return (state, ts.obs), ts.reward

    @jax.jit
    def rollout(state, obs, key):
        (state, obs), rewards = jax.lax.scan(body, (state, obs), jax.random.split(key, steps))
        return state, obs, rewards.sum()

    carry = list(env.init(jax.random.key(0)))
    carry[1] = carry[1].obs

    def run():
        carry[0], carry[1], total = rollout(carry[0], carry[1], jax.random.key(1))
        jax.block_until_ready(total)

    return run, env.close


def gym_envs(n: int, mode: str):
    if mode == "vector_entry_point":  # gymnasium's NumPy CartPole, in its own (next-step) auto-reset
        envs = gymnasium.make_vec("CartPole-v1", num_envs=n, vectorization_mode=mode)
    else:  # as envhub builds it
        same_step = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP, "copy": False}
        envs = gymnasium.make_vec("CartPole-v1", num_envs=n, vectorization_mode=mode, vector_kwargs=same_step)
    envs.reset(seed=0)
    return envs


def python_loop(n: int, steps: int, mode: str):
    envs, rng = gym_envs(n, mode), np.random.default_rng(0)

    def run():
        for _ in range(steps):
            envs.step(rng.integers(0, 2, n))

    return run, envs.close


def jax_policy_loop(n: int, steps: int, mode: str):
    envs = gym_envs(n, mode)
    jit_policy = jax.jit(policy)
    obs = [envs.reset(seed=0)[0]]

    def run():
        keys = jax.random.split(jax.random.key(1), steps)
        for key in keys:
            action = np.asarray(jit_policy(key, jnp.asarray(obs[0])))
            obs[0] = envs.step(action)[0]

    return run, envs.close


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--num-envs", default="16,64", help="comma-separated batch sizes")
    parser.add_argument("--vectorization", default="vector_entry_point", choices=["vector_entry_point", "sync"])
    parser.add_argument("--json", default=None, metavar="PATH", help="write comparison rows (raw = python loop)")
    args = parser.parse_args()
    sizes = [int(n) for n in str(args.num_envs).split(",")]
    rows = []
    print(
        f"CartPole-v1, {args.vectorization} vector env, {args.steps} steps x {args.repeats} repeats; "
        f"jax {jax.__version__}, gymnasium {gymnasium.__version__}"
    )
    print(
        f"{'num_envs':>8}  {'loop':<16} {'us/step':>9} {'env steps/s':>12} "
        f"{'vs python loop':>15} {'vs jax policy loop':>19}"
    )
    loops = {"python loop": python_loop, "jax policy loop": jax_policy_loop, "envhub scan": envhub_scan}
    for n in sizes:
        runs = {name: build(n, args.steps, args.vectorization) for name, build in loops.items()}
        for run, _ in runs.values():
            run()  # warm-up (compiles)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeats):  # interleaved, so a busy moment hits every loop alike
            for name, (run, _) in runs.items():
                times[name].append(timed(run))
        medians = {name: statistics.median(ts) for name, ts in times.items()}
        for name, seconds in medians.items():
            per_step = seconds / args.steps
            print(
                f"{n:>8}  {name:<16} {per_step * 1e6:9.1f} {n / per_step:12.0f} "
                f"{medians['python loop'] / seconds:14.2f}x {medians['jax policy loop'] / seconds:18.2f}x"
            )
        for _, close in runs.values():
            close()
        for raw in ("python loop", "jax policy loop"):
            rows.append(comparison_row("gymnasium", "CartPole-v1", n, args.steps, medians, {}, "envhub scan", raw))
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
