"""The host bridge's own cost: one host call per step of a jitted ``lax.scan``, per callback kind.

The body calls ``envhub.host.callback.call_host`` with a host function that returns a (16, 4)
float32 array and a counter (the shape of a small vector env's step), so the time is the callback
machinery, not an environment. Kinds run interleaved; medians of ``--repeats``.

Run: ``python benchmarks/host_callback.py [--steps 2000] [--repeats 7] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from _timing import write_json

from envhub.host import callback as host_callback

RESULTS = [jax.ShapeDtypeStruct((16, 4), jnp.float32), jax.ShapeDtypeStruct((), jnp.int32)]


@dataclasses.dataclass(frozen=True)
class HostStep:
    """A stand-in host step: fixed observations and the counter plus one."""

    def __call__(self, counter: np.ndarray) -> list[np.ndarray]:
        return [np.full((16, 4), 0.5, np.float32), np.int32(counter + 1)]


def scan_fn(kind: str, steps: int):
    host_callback.kind = kind  # read while tracing, below

    def body(counter, _):
        obs, counter = host_callback.call_host(HostStep(), RESULTS, counter)
        return counter, obs.sum()

    run = jax.jit(lambda c: jax.lax.scan(body, c, None, length=steps))
    jax.block_until_ready(run(jnp.int32(0)))  # compile
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args()
    kinds = [k for k in host_callback.KINDS if k != "buffer_callback" or host_callback.buffer_callback is not None]
    runs = {kind: scan_fn(kind, args.steps) for kind in kinds}
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(args.repeats):
        for kind, run in runs.items():
            start = time.perf_counter()
            counter, _ = jax.block_until_ready(run(jnp.int32(0)))
            times[kind].append((time.perf_counter() - start) / args.steps * 1e6)
            assert int(counter) == args.steps
    slowest = max(statistics.median(t) for t in times.values())
    rows = []
    print(f"jax {jax.__version__}, {args.steps} host calls per scan, median of {args.repeats}")
    for kind in kinds:
        median = statistics.median(times[kind])
        rows.append({"kind": kind, "us_per_call": median, "speedup_vs_slowest": slowest / median})
        print(f"{kind:16s} {median:8.1f} us/call   {slowest / median:5.1f}x")
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
