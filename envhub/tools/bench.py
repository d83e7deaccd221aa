"""Throughput of a jitted ``lax.scan`` rollout with random actions: what ``envhub bench`` measures.

Compile time is the first call (trace + compile + one run); throughput is env steps per second,
the median of ``repeats`` further calls. ``plot`` needs matplotlib (``pip install matplotlib``).
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax

SCHEMA_VERSION = 1


def measure(
    make_env: Callable[[int | None], Any],
    num_envs: int | None,
    steps: int,
    repeats: int,
    on_repeat: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Time one configuration; ``make_env(num_envs)`` builds the env (closed afterwards)."""
    from envhub.tools.rollout import random_policy, rollout

    with make_env(num_envs) as env:
        policy = random_policy(env)
        # The one rollout; only rewards leave jit, so XLA drops the rest of the trajectory (as fast as a bare scan).
        run = jax.jit(lambda key: rollout(env, policy, key, steps)[2].reward)
        start = time.perf_counter()
        jax.block_until_ready(run(jax.random.key(0)))
        compile_s = time.perf_counter() - start
        times = []
        for i in range(repeats):
            start = time.perf_counter()
            jax.block_until_ready(run(jax.random.key(i + 1)))
            times.append(time.perf_counter() - start)
            if on_repeat is not None:
                on_repeat(i + 1, repeats)
        env_id = env.id
    median = statistics.median(times)
    batch = num_envs or 1
    return {
        "id": env_id,
        "num_envs": batch,
        "steps": steps,
        "repeats": repeats,
        "compile_s": round(compile_s, 3),
        "median_s": round(median, 6),
        "steps_per_s": round(batch * steps / median, 1),
    }


def machine() -> dict[str, Any]:
    """Where the figures were measured."""
    import os

    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "jax": jax.__version__,
        "device": str(jax.devices()[0].platform),
    }


def report(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON document ``envhub bench --json`` writes."""
    return {"schema": SCHEMA_VERSION, "machine": machine(), "results": results}


def plot(series: dict[str, list[dict[str, Any]]], path: str, title: str = "") -> None:
    """Write a PNG of steps/s against num_envs (log-log), one line per series."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise RuntimeError("Plotting needs matplotlib: pip install matplotlib") from exc
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, rows in series.items():
        rows = sorted(rows, key=lambda r: r["num_envs"])
        ax.plot([r["num_envs"] for r in rows], [r["steps_per_s"] for r in rows], marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("num_envs")
    ax.set_ylabel("env steps / s")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = ["SCHEMA_VERSION", "machine", "measure", "plot", "report"]
