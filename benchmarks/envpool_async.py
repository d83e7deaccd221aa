"""envpool's async mode (``batch_size < num_envs``): envhub's ``AsyncEnvpool`` actor loop vs envpool's own.

- ``envhub actor (jit)``: ``AsyncEnvpool.recv`` -> random actions -> ``send`` in one jitted
  ``lax.fori_loop`` (host callbacks through ``envhub.host.callback``; same-step auto-reset).
- ``envhub actor (python)``: the same loop eagerly (no jit), NumPy random actions.
- ``envhub sync scan (n envs)``: no async at all: envhub's synchronous fast path on all ``num_envs``
  envs (envpool's XLA step in a jitted scan, same-step resets), as many env steps per call.
- ``envpool python loop``: envpool's own ``recv``/``send`` in a Python loop with NumPy random actions
  (next-step auto-reset; the raw baseline).
- ``envpool xla loop``: envpool's own ``env.xla()`` ``recv``/``send`` in a jitted ``fori_loop``.

Run: ``python benchmarks/envpool_async.py [--task CartPole-v1] [--num-envs 16] [--batch-size 8]
[--batches 2000] [--repeats 7] [--json out.json]``. Prints medians per batch and ratios in one run.
"""

from __future__ import annotations

import argparse
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from _timing import comparison_row, interleaved_medians, write_json
from envhub_envpool import AsyncEnvpool
from envhub_envpool._shim import import_envpool

import envhub

warnings.filterwarnings("ignore", module="gymnasium")


def envhub_actor(task: str, n: int, b: int, batches: int, num_actions: int):
    pool = AsyncEnvpool(task, num_envs=n, batch_size=b)

    def body(i, carry):
        handle, key = carry
        key, sub = jax.random.split(key)
        handle, ts = pool.recv(handle)
        action = jax.random.randint(sub, (b,), 0, num_actions, jnp.int32)
        return pool.send(handle, action, ts.info["env_id"]), key

    run = jax.jit(lambda h, k: jax.lax.fori_loop(0, batches, body, (h, k)))
    carry = [pool.init(jax.random.key(0)), jax.random.key(1)]

    def once():
        carry[:] = jax.block_until_ready(run(*carry))

    return once, pool.close


def envhub_actor_python(task: str, n: int, b: int, batches: int, num_actions: int):
    """The same actor loop, eager: ``recv``/``send`` called from Python, no jit (NumPy random actions)."""
    pool, rng = AsyncEnvpool(task, num_envs=n, batch_size=b), np.random.default_rng(0)
    box = [pool.init(jax.random.key(0))]

    def once():
        handle = box[0]
        for _ in range(batches):
            handle, ts = pool.recv(handle)
            handle = pool.send(handle, rng.integers(0, num_actions, b, dtype=np.int32), ts.info["env_id"])
        box[0] = handle

    return once, pool.close


def envhub_sync_scan(task: str, n: int, b: int, batches: int, num_actions: int):
    """No async at all: envhub's synchronous fast path on all ``n`` envs (envpool's XLA step in a jitted
    scan, same-step resets), ``batches * b / n`` steps: the same env steps per call as the other loops."""
    env = envhub.make(f"envpool/{task}", num_envs=n)

    def body(state, key):
        state, ts = env.step(key, state, jax.random.randint(key, (n,), 0, num_actions, jnp.int32))
        return state, ts.reward.sum()

    run = jax.jit(lambda s, k: jax.lax.scan(body, s, jax.random.split(k, batches * b // n))[0])
    box = [env.init(jax.random.key(0))[0]]

    def once():
        box[0] = jax.block_until_ready(run(box[0], jax.random.key(1)))

    return once, env.close


def envpool_env(task: str, n: int, b: int):
    envpool = import_envpool()
    env = envpool.make(task, env_type="gymnasium", num_envs=n, batch_size=b, seed=0)
    env.async_reset()
    return env


def envpool_python(task: str, n: int, b: int, batches: int, num_actions: int):
    env, rng = envpool_env(task, n, b), np.random.default_rng(0)

    def once():
        for _ in range(batches):
            info = env.recv()[-1]
            env.send(rng.integers(0, num_actions, b, dtype=np.int32), info["env_id"])

    return once, env.close


def envpool_xla(task: str, n: int, b: int, batches: int, num_actions: int):
    env = envpool_env(task, n, b)
    handle, recv, send, _ = env.xla()

    def body(i, carry):
        handle, key = carry
        key, sub = jax.random.split(key)
        handle, (_, _, _, _, info) = recv(handle)
        action = jax.random.randint(sub, (b,), 0, num_actions, jnp.int32)
        return send(handle, action, info["env_id"]), key

    run = jax.jit(lambda h, k: jax.lax.fori_loop(0, batches, body, (h, k)))
    carry = [handle, jax.random.key(1)]

    def once():
        carry[:] = jax.block_until_ready(run(*carry))

    return once, env.close


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="CartPole-v1")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--batches", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default=None, metavar="PATH", help="write comparison rows (raw = python loop)")
    args = parser.parse_args()
    envpool = import_envpool()
    num_actions = int(envpool.make_spec(args.task).action_space.n)
    n, b, batches = args.num_envs, args.batch_size, args.batches
    loops = {
        "envhub actor (jit)": envhub_actor,
        "envhub actor (python)": envhub_actor_python,
        "envhub sync scan (n envs)": envhub_sync_scan,
        "envpool python loop": envpool_python,
        "envpool xla loop": envpool_xla,
    }
    built = {name: build(args.task, n, b, batches, num_actions) for name, build in loops.items()}
    for once, _ in built.values():
        once()  # warm-up (compiles)
    medians = interleaved_medians({name: once for name, (once, _) in built.items()}, args.repeats)
    for _, close in built.values():
        close()
    print(f"{args.task}: num_envs={n}, batch_size={b}, {batches} batches x {args.repeats} repeats; envpool "
          f"{envpool.__version__}, jax {jax.__version__}")  # fmt: skip
    print(f"{'loop':<26} {'us/batch':>9} {'env steps/s':>12} {'this / envpool python loop':>27}")
    for name, seconds in medians.items():
        print(f"{name:<26} {seconds / batches * 1e6:9.1f} {b * batches / seconds:12.0f} "
              f"{medians['envpool python loop'] / seconds:26.2f}x")  # fmt: skip
    rows = [
        comparison_row("envpool", f"{args.task} async {n}/{b}", b, batches, medians, {}, ours, raw)
        for ours in ("envhub actor (jit)", "envhub actor (python)", "envhub sync scan (n envs)")
        for raw in ("envpool python loop", "envpool xla loop")
    ]
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
