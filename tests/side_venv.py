"""Side virtual environments: CI's jobs that need other library versions than the main test venv.

The release job, the gymnasium plugin at both ends of its range and SB3 with CPU torch each build a
fresh venv with uv under ``tmp_path`` and run a subprocess in it, so they run inside the one pytest
command of ``.ci/run``. They need the package index (``-m "not release and not side_venv"`` offline).
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["JAX_WITH_CACHE", "ROOT", "UV", "Report", "make_venv", "pinned", "pytest_in", "run"]

ROOT = Path(__file__).resolve().parents[1]
UV = [sys.executable, "-m", "uv"]


def run(args: list[object], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``args`` outside this venv (no PYTHONPATH, no VIRTUAL_ENV); with ``check``, fail with its output."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and done.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done


def make_venv(where: Path, *install: object) -> Path:
    """A fresh venv at ``where`` (this Python) with ``uv pip install *install``; returns its python."""
    run([*UV, "venv", "--quiet", "--python", sys.executable, where], where.parent)
    python = where / "bin" / "python"
    run([*UV, "pip", "install", "--quiet", "--python", python, *install], where.parent)
    return python


#: What a side venv that runs JAX installs to share the suite's compile cache: the main venv's jax and
#: jaxlib (cache entries are keyed by their versions).
JAX_WITH_CACHE = ("jax", "jaxlib")


def pinned(*names: str) -> list[str]:
    """``name==version`` as installed here (``pinned(*JAX_WITH_CACHE)``: JAX sharing the compile cache)."""
    return [f"{name}=={importlib.metadata.version(name)}" for name in names]


@dataclass
class Report:
    """What a pytest run in a side venv did, read from its JUnit XML."""

    passed: int = 0
    skipped: list[str] = field(default_factory=list)  # each skip's message and text (the reason)
    failed: list[str] = field(default_factory=list)  # node ids of failures and errors
    output: str = ""

    def __str__(self) -> str:
        return f"{self.passed} passed, {len(self.skipped)} skipped, failed: {self.failed}\n{self.output[-4000:]}"


def pytest_in(python: Path, *args: object) -> Report:
    """Run pytest with ``python`` in the repository root on ``args`` (no xdist: one process)."""
    xml = Path(python).parents[1] / "junit.xml"
    done = run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=-ra", f"--junitxml={xml}", *args],
        ROOT,
        check=False,
    )
    report = Report(output=done.stdout + done.stderr)
    if not xml.is_file():
        report.failed.append(f"pytest wrote no report (exit {done.returncode})")
        return report
    for case in ET.parse(xml).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome = {child.tag: child for child in case}
        if "failure" in outcome or "error" in outcome:
            report.failed.append(name)
        elif "skipped" in outcome:
            skip = outcome["skipped"]
            report.skipped.append(f"{skip.get('message', '')}: {skip.text or ''}")
        else:
            report.passed += 1
    if done.returncode != 0 and not report.failed:
        report.failed.append(f"pytest exited {done.returncode}")
    return report
