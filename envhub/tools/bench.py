"""Throughput of a jitted ``lax.scan`` rollout with random actions: what ``envhub bench`` measures.

``compile_s`` is the first call of the jitted rollout: tracing, XLA's compile and one run of ``steps`` steps;
making the env before it (importing the backend library, ``envhub.make``) is not in it. Throughput is env
steps per second, the median of ``repeats`` further calls. ``figure`` and ``plot`` need matplotlib
(``pip install matplotlib``).
"""

from __future__ import annotations

import itertools
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax

from envhub.tools import plotting

SCHEMA_VERSION = 1


def measure(
    make_env: Callable[[int | None], Any],
    num_envs: int | None,
    steps: int,
    repeats: int,
    on_repeat: Callable[[int, int], None] | None = None,
    on_compile: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Time one configuration; ``make_env(num_envs)`` builds the env (closed afterwards).

    ``on_compile()`` is called when the env is made, at the instant ``compile_s`` starts counting (so progress
    shown from then on measures what ``compile_s`` does); ``on_repeat(i, repeats)`` after each timed repeat.
    """
    from envhub.tools.rollout import random_policy, rollout

    with make_env(num_envs) as env:
        policy = random_policy(env)
        # The one rollout; only rewards leave jit, so XLA drops the rest of the trajectory (as fast as a bare scan).
        run = jax.jit(lambda key: rollout(env, policy, key, steps)[2].reward)
        if on_compile is not None:
            on_compile()
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


def figure(series: dict[str, list[dict[str, Any]]], title: str = "") -> Any:
    """A matplotlib figure of steps/s against num_envs: one small panel per backend (the prefix of each series'
    ``id``), a line per series, log scales on both axes, each point labelled with its steps/s, colour-blind-safe
    colours and a marker per series, the legend outside the axes (``envhub.tools.plotting``).

    Raises:
        MissingDependencyError: matplotlib is not installed.
    """
    plt = plotting.pyplot("envhub bench --plot")
    backends: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for label, rows in series.items():
        backend = str(rows[0].get("id", label) if rows else label).partition("/")[0]
        backends.setdefault(backend, {})[label] = sorted(rows, key=lambda r: r["num_envs"])
    fig, axes = plt.subplots(
        len(backends), 1, figsize=(7.5, 0.6 + 2.8 * len(backends)), layout="constrained", squeeze=False
    )
    for ax, (backend, panel) in zip(axes[:, 0], backends.items()):
        sizes = sorted({r["num_envs"] for rows in panel.values() for r in rows})
        for i, ((label, rows), (colour, marker)) in enumerate(zip(panel.items(), itertools.cycle(plotting.SERIES))):
            xs, ys = [r["num_envs"] for r in rows], [r["steps_per_s"] for r in rows]
            ax.plot(xs, ys, color=colour, marker=marker, label=label, zorder=3)
            for x, y in zip(xs, ys):
                ax.annotate(
                    plotting.steps_label(float(f"{y:.2g}")),
                    (x, y),
                    textcoords="offset points",
                    xytext=(0, 6 if i % 2 == 0 else -12),  # every other series' labels below its line
                    ha="center",
                    fontsize=7,
                    color=colour,
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.xaxis.set_minor_formatter(plt.NullFormatter())
        plotting.log_count_axis(ax.yaxis)
        ax.margins(x=0.1, y=0.25)
        ax.grid(True, which="major", alpha=0.3)
        ax.set_xlabel("num_envs (log scale)", fontsize=8)
        ax.set_ylabel("env steps / s (log scale)", fontsize=8)
        ax.tick_params(labelsize=8)
        ax.set_title(f"{backend}: env steps per second (higher is better)", loc="left", fontsize=9)
        plotting.legend_outside(ax)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot(series: dict[str, list[dict[str, Any]]], path: str, title: str = "") -> None:
    """Write ``figure(series, title)`` to ``path`` (.png, .svg or .pdf, by its extension).

    Raises:
        MissingDependencyError: matplotlib is not installed.
    """
    fig = figure(series, title)
    fig.savefig(path, dpi=110)
    plotting.pyplot("envhub bench --plot").close(fig)


__all__ = ["SCHEMA_VERSION", "figure", "machine", "measure", "plot", "report"]
