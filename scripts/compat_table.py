#!/usr/bin/env python3
"""The tested matrix in docs/compatibility.md, written from CI's run files, never by hand.

    python scripts/compat_table.py              rewrite the table from benchmarks/results/compat/*.json
    python scripts/compat_table.py --from .ci/results
                                                copy a CI run's files there first (after `bash .ci/run`)
    python scripts/compat_table.py --check      exit 1 if the doc's table differs from the run files

Each CI job (.ci/run) runs pytest with ENVHUB_TEST_RUN_FILE=.ci/results/<job>.json; the root conftest
writes there the Python, the core libraries' and every backend library's versions and the outcome
counts (tests/run_file.py). The table sits between the two markers below in docs/compatibility.md.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "benchmarks" / "results" / "compat"
DOC = ROOT / "docs" / "compatibility.md"
START, END = "<!-- compat-matrix:start (scripts/compat_table.py writes this) -->", "<!-- compat-matrix:end -->"
#: Row order and what each job is (the run file's name without .json).
JOBS = {
    "main": "README's test command: the whole suite",
    "newest": "newest: highest Python here, highest versions the ranges allow; quick tier",
    "oldest": "oldest: Python 3.10, `--resolution lowest-direct`; quick tier",
}


def _cell(libraries: dict[str, str]) -> str:
    if "why" in libraries:
        return "not installed: " + libraries["why"].split(", this is")[0].removeprefix("envhub-")
    return ", ".join(f"{name} {version}" for name, version in libraries.items())


def table(runs: dict[str, dict]) -> str:
    """The markdown table (one column per job) of ``runs``, keyed by job name."""
    jobs = [job for job in JOBS if job in runs] + sorted(set(runs) - set(JOBS))
    header = "| | " + " | ".join(f"`{job}`" for job in jobs) + " |"
    rows = [header, "|---" * (len(jobs) + 1) + "|"]
    rows.append("| job | " + " | ".join(JOBS.get(job, job) for job in jobs) + " |")
    rows.append("| date | " + " | ".join(runs[job]["date"] for job in jobs) + " |")
    rows.append("| Python | " + " | ".join(runs[job]["python"] for job in jobs) + " |")
    for name in runs[jobs[0]]["core"]:
        rows.append(f"| {name} | " + " | ".join(str(runs[job]["core"].get(name)) for job in jobs) + " |")
    for prefix in sorted({prefix for job in jobs for prefix in runs[job]["backends"]}):
        cells = [_cell(runs[job]["backends"].get(prefix, {"why": "not in this run"})) for job in jobs]
        rows.append(f"| envhub-{prefix} | " + " | ".join(cells) + " |")
    outcome = []
    for job in jobs:
        counts = runs[job]["counts"]
        text = ", ".join(f"{counts[key]} {key}" for key in ("passed", "failed", "error", "skipped") if key in counts)
        outcome.append(f"{text} (exit {runs[job]['exit_status']})")
    rows.append("| pytest | " + " | ".join(outcome) + " |")
    return "\n".join(rows)


def load(folder: Path = RUNS) -> dict[str, dict]:
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


def rendered(doc: str, runs: dict[str, dict]) -> str:
    """``doc`` with the text between the markers replaced by the table of ``runs``."""
    before, rest = doc.split(START, 1)
    _, after = rest.split(END, 1)
    return f"{before}{START}\n{table(runs)}\n{END}{after}"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--from"]:
        RUNS.mkdir(parents=True, exist_ok=True)
        for path in Path(argv[1]).glob("*.json"):
            shutil.copy(path, RUNS / path.name)
    doc = DOC.read_text()
    new = rendered(doc, load())
    if argv[:1] == ["--check"]:
        if new != doc:
            print(f"{DOC.relative_to(ROOT)}'s tested matrix is not the run files' (run python scripts/compat_table.py)")
            return 1
        return 0
    DOC.write_text(new)
    print(f"wrote the tested matrix of {len(load())} runs into {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
