"""mkdocs hook: serve the committed benchmark plot (``benchmarks/results/throughput.png``) as ``assets/throughput.png``.

The performance page includes ``benchmarks/results/RESULTS.md`` itself (pymdownx.snippets), so the
site shows the last committed run with no copy to keep in step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

PLOT = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "throughput.png"


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "assets/throughput.png", abs_src_path=str(PLOT)))
    return files
