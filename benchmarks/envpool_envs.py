"""envpool CartPole-v1 (64 envs) and Pong-v5 (16 envs): envhub's jitted scan vs three raw envpool loops.

- ``envhub scan``: ``envhub.make("envpool/<task>", num_envs=N)``, ``init`` outside jit (the fast path),
  then random actions and ``env.step`` in one jitted ``lax.scan`` (same-step auto-reset).
- ``envpool xla scan`` (a): envpool's own ``env.xla()`` ``step`` in a jitted ``lax.scan`` with the
  same random actions (envpool's next-step reset; the raw baseline of the JSON rows).
- ``native loop`` (b): ``env.step`` in a Python loop with NumPy random actions.
- ``io_callback scan`` (c): envpool's ``env.step`` inside an ordered ``io_callback`` in a jitted scan.

Run: ``python benchmarks/envpool_envs.py [--repeats 7] [--quick] [--json out.json]``.
All loops of one task run interleaved in one process; medians and ratios are printed.
"""

from __future__ import annotations

import argparse
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from _timing import comparison_row, first_call_seconds, interleaved_medians, write_json
from jax.experimental import io_callback

import envhub

warnings.filterwarnings("ignore", module="gymnasium")


def actions(key: jax.Array, n: int, num_actions: int) -> jax.Array:
    return jax.random.randint(key, (n,), 0, num_actions, jnp.int32)


def scan_loop(step, carry, n: int, steps: int, num_actions: int = 2):
    """A callable running ``steps`` of ``step(key, carry, actions) -> (carry, reward)`` with random actions
    in one jitted scan, the carry kept between calls (a pool's handle or state cannot be replayed)."""

    @jax.jit
    def rollout(carry, key):
        def body(carry, key):
            carry, reward = step(key, carry, actions(key, n, num_actions))
            return carry, reward.sum()

        carry, rewards = jax.lax.scan(body, carry, jax.random.split(key, steps))
        return carry, rewards.sum()

    box = [carry]

    def run():
        box[0], total = rollout(box[0], jax.random.key(1))
        return jax.block_until_ready(total)

    return run


def envhub_scan(task: str, n: int, steps: int, num_actions: int):
    env = envhub.make(f"envpool/{task}", num_envs=n)
    assert env.fast_path, env.fast_path_reason

    def step(key, state, action):
        state, ts = env.step(key, state, action)
        return state, ts.reward

    return scan_loop(step, env.init(jax.random.key(0))[0], n, steps, num_actions), env.close


def raw_pool(task: str, n: int):
    import envpool

    env = envpool.make(task, env_type="gymnasium", num_envs=n, seed=0)
    env.reset()
    return env


def envpool_xla_scan(task: str, n: int, steps: int, num_actions: int):
    env = raw_pool(task, n)
    handle, _, _, xla_step = env.xla()

    def step(key, handle, action):
        handle, (_, reward, _, _, _) = xla_step(handle, action)
        return handle, reward

    return scan_loop(step, handle, n, steps, num_actions), env.close


def native_loop(task: str, n: int, steps: int, num_actions: int):
    env, rng = raw_pool(task, n), np.random.default_rng(0)

    def run():
        for _ in range(steps):
            env.step(rng.integers(0, num_actions, n, dtype=np.int32))

    return run, env.close


def io_callback_scan(task: str, n: int, steps: int, num_actions: int):
    env = raw_pool(task, n)

    def host_step(action):
        return np.asarray(env.step(np.asarray(action))[1], np.float32)

    @jax.jit
    def rollout(key):
        def body(carry, key):
            reward = io_callback(
                host_step, jax.ShapeDtypeStruct((n,), jnp.float32), actions(key, n, num_actions), ordered=True
            )
            return carry + reward.sum(), None

        return jax.lax.scan(body, jnp.float32(0), jax.random.split(key, steps))[0]

    def run():
        return jax.block_until_ready(rollout(jax.random.key(1)))

    return run, env.close


LOOPS = {
    "envhub scan": envhub_scan,
    "envpool xla scan": envpool_xla_scan,
    "native loop": native_loop,
    "io_callback scan": io_callback_scan,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a tiny configuration (a smoke test, not figures)")
    parser.add_argument("--json", default=None, metavar="PATH", help="write comparison rows (raw = envpool xla scan)")
    args = parser.parse_args()
    import envpool

    # (task, num_envs, steps per repeat, number of actions)
    configs = [("CartPole-v1", 64, 1000, 2), ("Pong-v5", 16, 100, 6)]
    if args.quick:
        configs = [("CartPole-v1", 8, 50, 2), ("Pong-v5", 2, 5, 6)]
        args.repeats = min(args.repeats, 2)
    print(f"envpool {envpool.__version__}, jax {jax.__version__}, {args.repeats} interleaved repeats, medians")
    header = f"{'task':<12} {'n':>3}  {'loop':<17} {'ms/repeat':>10} {'env steps/s':>12}  {'envhub / this':>13}"
    print(header)
    rows = []
    for task, n, steps, num_actions in configs:
        built = {name: make(task, n, steps, num_actions) for name, make in LOOPS.items()}
        compiles = {name: first_call_seconds(run) for name, (run, _) in built.items()}
        medians = interleaved_medians({name: run for name, (run, _) in built.items()}, args.repeats)
        for name, seconds in medians.items():
            ratio = seconds / medians["envhub scan"]
            print(f"{task:<12} {n:>3}  {name:<17} {seconds * 1e3:10.1f} {n * steps / seconds:12.0f}  {ratio:12.2f}x")
        for _, close in built.values():
            close()
        for raw in ("envpool xla scan", "native loop", "io_callback scan"):
            rows.append(comparison_row("envpool", task, n, steps, medians, compiles, "envhub scan", raw))
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
