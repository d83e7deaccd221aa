"""mkdocs hook: serve the committed plots (benchmark throughput, PPO curves) from ``benchmarks/results/`` as ``assets/``.

``throughput.png`` is drawn by ``python benchmarks/plot_results.py`` (one panel per backend, from the run files).

The performance page includes ``benchmarks/results/RESULTS.md`` itself (pymdownx.snippets), so the
site shows the last committed run with no copy to keep in step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
PLOTS = {"assets/throughput.png": RESULTS / "throughput.png", "assets/ppo-curves.png": RESULTS / "ppo" / "curves.png"}


def on_files(files: Files, config: Any) -> Files:
    for dest, plot in PLOTS.items():
        files.append(File.generated(config, dest, abs_src_path=str(plot)))
    return files
