"""Shared helpers for the benchmarks: interleaved repeats, medians, compile timing, JSON rows."""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import jax


def interleaved_medians(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Time each callable ``repeats`` times, interleaving them so machine noise hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for i in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
        print(f"\rrepeat {i + 1}/{repeats}", end="" if i + 1 < repeats else "\n", file=sys.stderr, flush=True)
    return {name: statistics.median(ts) for name, ts in times.items()}


def first_call_seconds(fn: Callable[[], object]) -> float:
    """Seconds of the first call (trace + compile + one run)."""
    start = time.perf_counter()
    jax.block_until_ready(fn())
    return time.perf_counter() - start


def compile_timed(run: Callable[[jax.Array], Any], key: jax.Array) -> tuple[Any, float]:
    """``run`` compiled for ``key`` (lower + compile), and the seconds that took."""
    start = time.perf_counter()
    compiled = jax.jit(run).lower(key).compile()
    return compiled, time.perf_counter() - start


def time_rollouts(
    runs: dict[str, Callable[[jax.Array], Any]], key: jax.Array, repeats: int
) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
    """Compile each rollout ``key -> (total reward, episode ends)``, then time them interleaved.

    Returns: the median seconds per call, the compile seconds and the episode ends of each rollout.
    """
    compiled, compiles = {}, {}
    for label, run in runs.items():
        compiled[label], compiles[label] = compile_timed(run, key)
    ends = {label: int(jax.block_until_ready(run(key))[1]) for label, run in compiled.items()}
    medians = interleaved_medians(
        {n: (lambda r=r: jax.block_until_ready(r(key))) for n, r in compiled.items()}, repeats
    )
    return medians, compiles, ends


def comparison_row(
    backend: str,
    env: str,
    num_envs: int,
    steps: int,
    medians: dict[str, float],
    compiles: dict[str, float],
    envhub: str,
    raw: str,
) -> dict[str, Any]:
    """One row of the suite's JSON: envhub and the raw baseline doing the same work."""
    rate = {name: num_envs * steps / seconds for name, seconds in medians.items()}
    return {
        "backend": backend,
        "env": env,
        "num_envs": num_envs,
        "steps": steps,
        "envhub": envhub,
        "raw": raw,
        "envhub_steps_per_s": round(rate[envhub], 1),
        "raw_steps_per_s": round(rate[raw], 1),
        "ratio": round(rate[envhub] / rate[raw], 3),
        "envhub_compile_s": round(compiles.get(envhub, float("nan")), 3),
        "raw_compile_s": round(compiles.get(raw, float("nan")), 3),
    }


def write_json(rows: list[dict[str, Any]], path: str | None) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(rows, f, indent=2)


def compare_each(
    backend: str,
    names: list[str],
    raw: Callable[[str], Callable[[jax.Array], Any]],
    envhub: Callable[[str], Callable[[jax.Array], Any]],
    steps_per_run: tuple[int, int],
    repeats: int,
) -> list[dict[str, Any]]:
    """For each env name, time ``raw(name)`` and ``envhub(name)`` (rollouts ``key -> (reward, ends)``) interleaved,
    print one line and return the rows; ``steps_per_run`` is ``(num_envs, steps)``. The episode ends of both go
    into the row (``episode_ends``)."""
    rows, label = [], f"{backend} (raw)"
    for name in names:
        medians, compiles, ends = time_rollouts({label: raw(name), "envhub": envhub(name)}, jax.random.key(0), repeats)
        row = comparison_row(backend, name, *steps_per_run, medians, compiles, "envhub", label)
        rows.append({**row, "episode_ends": ends})
        print(
            f"  {name:<22} raw {row['raw_steps_per_s'] / 1e3:9.1f} k/s   envhub {row['envhub_steps_per_s'] / 1e3:9.1f} k/s"
            f"   ratio {row['ratio']:.3f} (target >= 0.95)   compile raw {row['raw_compile_s']:.1f}s "
            f"envhub {row['envhub_compile_s']:.1f}s   episode ends raw {ends[label]} envhub {ends['envhub']}"
        )
    return rows


def comparison_cli(
    doc: str,
    backend: str,
    names: tuple[str, str],
    raw: Callable[[str, int, int], Callable[[jax.Array], Any]],
    envhub: Callable[[str, int, int], Callable[[jax.Array], Any]],
    headline: Callable[[Any], str],
) -> None:
    """A benchmark's command line: ``--<names[0]>`` (comma-separated ids, default ``names[1]``), ``--num-envs``,
    ``--steps``, ``--repeats``, ``--json``; prints ``headline(args)``, then ``compare_each`` of the rollouts
    ``raw(name, num_envs, steps)`` and ``envhub(name, num_envs, steps)``, and writes the rows."""
    import argparse

    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(f"--{names[0]}", dest="names", default=names[1], help=f"comma-separated {backend} ids")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    args = parser.parse_args()
    print(headline(args))
    size = (args.num_envs, args.steps)
    rows = compare_each(
        backend, args.names.split(","), lambda n: raw(n, *size), lambda n: envhub(n, *size), size, args.repeats
    )
    write_json(rows, args.json)


def envhub_random_rollout(env: Any, steps: int) -> Callable[[jax.Array], tuple[jax.Array, jax.Array]]:
    """``run(key)``: init ``env`` (batched), then ``steps`` steps of uniformly random discrete actions in one
    ``lax.scan``; returns the summed reward and the number of episode ends (the envhub side of a comparison)."""
    num_envs, num_actions = env.num_envs, env.single_action_space.n

    def run(key: jax.Array) -> tuple[jax.Array, jax.Array]:
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key)

        def body(carry: Any, key: jax.Array) -> tuple[Any, None]:
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            action = jax.random.randint(action_key, (num_envs,), 0, num_actions, dtype=env.action_space.dtype)
            state, ts = env.step(step_key, state, action)
            return (state, total + ts.reward.sum(), ends + ts.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def raw_random_rollout(
    reset: Callable[[jax.Array], Any],
    step: Callable[[jax.Array, Any, jax.Array], tuple[Any, jax.Array, jax.Array]],
    num_envs: int,
    num_actions: int,
    steps: int,
) -> Callable[[jax.Array], tuple[jax.Array, jax.Array]]:
    """``run(key)``: the library's side of a comparison, the loop of ``envhub_random_rollout``: ``reset(keys)``
    gives the batched state, then ``steps`` steps of ``step(key, state, actions) -> (state, reward, done)``
    (the library's batched step and its auto-reset; ``key`` is the step's second key) with uniformly random
    actions in one ``lax.scan``; returns the summed reward and the number of episode ends."""

    def run(key: jax.Array) -> tuple[jax.Array, jax.Array]:
        init_key, key = jax.random.split(key)
        state = reset(jax.random.split(init_key, num_envs))

        def body(carry: Any, key: jax.Array) -> tuple[Any, None]:
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            action = jax.random.randint(action_key, (num_envs,), 0, num_actions)
            state, reward, done = step(step_key, state, action)
            return (state, total + reward.sum(), ends + done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run
