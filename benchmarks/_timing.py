"""Shared timing helpers for the benchmarks: interleaved repeats, medians, ratios."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable


def interleaved_medians(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Time each callable ``repeats`` times, interleaving them so machine noise hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for i in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
        print(f"\rrepeat {i + 1}/{repeats}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return {name: statistics.median(ts) for name, ts in times.items()}
