"""What a test run ran on, written where ``ENVHUB_TEST_RUN_FILE`` names (conftest.py; .ci/run sets it per job).

One JSON file per CI job: the Python, the versions of jax, jaxlib, numpy, pluggy and each backend
library the in-repo plugins need (or why a plugin is not there), the pytest command's arguments and
its outcome counts. ``scripts/compat_table.py`` turns the committed copies
(``benchmarks/results/compat/``) into the tested matrix of docs/compatibility.md.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import platform
import re
from collections.abc import Callable
from pathlib import Path

from packaging.requirements import Requirement

#: Core libraries whose versions every run file records.
CORE = ("jax", "jaxlib", "numpy", "pluggy", "pytest")


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def backend_libraries(plugins: Path, not_installed: Callable[[Path], str | None]) -> dict[str, dict[str, str]]:
    """Per in-repo plugin (by prefix): each library it requires, at its installed version, or ``why``
    the plugin is not there (``not_installed``, the root conftest's)."""
    out: dict[str, dict[str, str]] = {}
    for folder in sorted(p for p in plugins.glob("envhub-*") if (p / "pyproject.toml").is_file()):
        prefix = folder.name.removeprefix("envhub-")
        why = not_installed(folder)
        if why is not None:
            out[prefix] = {"why": why}
            continue
        libraries = {}
        for line in importlib.metadata.requires(folder.name) or []:
            requirement = Requirement(line)
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            if requirement.name != "envhub":
                libraries[requirement.name] = _version(requirement.name) or "?"
        out[prefix] = libraries
    return out


def write(path: str, args: list[str], stats: dict[str, list[object]], exit_status: int, backends: dict) -> None:
    """Write the run file for one finished run: ``stats`` is pytest's terminal reporter's."""
    counts = {
        key: len(reports)
        for key, reports in stats.items()
        if key in ("passed", "failed", "skipped", "error", "xfailed", "xpassed") and reports
    }
    record = {
        "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
        "pytest_args": [re.sub(r"^/.*/", "", arg) for arg in args],
        "exit_status": int(exit_status),
        "counts": counts,
        "core": {name: _version(name) for name in CORE},
        "backends": backends,
    }
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
