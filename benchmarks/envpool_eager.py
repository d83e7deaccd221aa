"""envpool's fast path called eagerly (no jit): per-step time against envpool's own Python loop, and
compiles and RSS over many make/init/step/close cycles.

    python benchmarks/envpool_eager.py [--num-envs 16] [--steps 200] [--cycles 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import envpool
import jax
import jax.monitoring
import jax.numpy as jnp
import numpy as np

import envhub

COMPILES: list[str] = []
jax.monitoring.register_event_duration_secs_listener(
    lambda name, _secs, **_: COMPILES.append(name) if name == "/jax/core/compile/backend_compile_duration" else None
)


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def envhub_step_seconds(num_envs: int, steps: int) -> float:
    env = envhub.make("envpool/CartPole-v1", num_envs=num_envs)
    state, _ = env.init(jax.random.key(0))
    action, key = jnp.zeros(num_envs, jnp.int32), jax.random.key(1)
    state, _ = env.step(key, state, action)
    start = time.perf_counter()
    for _ in range(steps):
        state, ts = env.step(key, state, action)
    jax.block_until_ready(ts.obs)
    env.close()
    return (time.perf_counter() - start) / steps


def envpool_step_seconds(num_envs: int, steps: int) -> float:
    pool = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=num_envs)
    pool.reset()
    action = np.zeros(num_envs, np.int32)
    start = time.perf_counter()
    for _ in range(steps):
        pool.step(action)
    pool.close()
    return (time.perf_counter() - start) / steps


def cycles(num_envs: int, count: int) -> tuple[int, float, float]:
    """Compiles and RSS growth over ``count`` eager cycles after 10 warm-up ones, and seconds per cycle."""
    action = jnp.zeros(num_envs, jnp.int32)
    for i in range(count + 10):
        if i == 10:
            compiles, rss, start = len(COMPILES), rss_mb(), time.perf_counter()
        env = envhub.make("envpool/CartPole-v1", num_envs=num_envs)
        state, _ = env.init(jax.random.key(i))
        state, ts = env.step(jax.random.key(i), state, action)
        jax.block_until_ready(ts.obs)
        env.close()
        if i % 100 == 99:
            print(f"\r  cycle {i + 1}/{count + 10}", end="", flush=True)
    gc.collect()
    print()
    return len(COMPILES) - compiles, rss_mb() - rss, (time.perf_counter() - start) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--cycles", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    ours, raw = [], []
    for _ in range(args.repeats):  # interleaved: the machine's load hits both alike
        ours.append(envhub_step_seconds(args.num_envs, args.steps))
        raw.append(envpool_step_seconds(args.num_envs, args.steps))
    m_ours, m_raw = statistics.median(ours), statistics.median(raw)
    print(
        f"CartPole-v1, {args.num_envs} envs, eager step (median of {args.repeats}): envhub {m_ours * 1e3:.2f} ms, "
        f"envpool's own step {m_raw * 1e3:.3f} ms, ratio {m_raw / m_ours:.3f} (target: envhub <= 5 ms)"
    )
    compiles, growth, per_cycle = cycles(args.num_envs, args.cycles)
    print(
        f"{args.cycles} eager make/init/step/close cycles: {compiles} compiles, RSS growth {growth:.1f} MB "
        f"(target <= 20 MB), {per_cycle * 1e3:.1f} ms per cycle"
    )


if __name__ == "__main__":
    main()
