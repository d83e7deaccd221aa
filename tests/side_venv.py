"""Side virtual environments: CI's jobs that need other library versions than the main test venv.

The gymnasium plugin at both ends of its range, SB3 with CPU torch and the release job (three venvs of
built wheels) each make a fresh venv with uv (``side_venv``) and run subprocesses in it, so they run
inside the one pytest command of ``.ci/run``. They need the package index
(``-m "not release and not side_venv"`` offline).

A side venv is made afresh on every run, but at a fixed place in the user cache
(``~/.cache/envhub/side-venvs/NAME``, ``$XDG_CACHE_HOME`` respected), so that the bytecode Python
compiles on import (torch's alone: 12 of the SB3 job's 20 s) is kept between runs in a
``PYTHONPYCACHEPREFIX`` beside it. uv hard-links the installed files from its cache, so a file keeps
its modification time while its version does not change, and Python recompiles a module whose source
changed (its time or size differs). A lock makes a second run on the same machine wait for the venv.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "JAX_WITH_CACHE",
    "PYTEST",
    "ROOT",
    "SIDE_VENVS",
    "UV",
    "Report",
    "installed",
    "pinned",
    "pytest_in",
    "run",
    "side_venv",
]

ROOT = Path(__file__).resolve().parents[1]
UV = [sys.executable, "-m", "uv"]
SIDE_VENVS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "envhub" / "side-venvs"


def run(args: list[object], cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``args`` outside this venv (no PYTHONPATH, no VIRTUAL_ENV); with ``check``, fail with its output.

    A side venv's python keeps its bytecode in the ``pycache`` folder beside the venv (``side_venv``)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONPYCACHEPREFIX")}
    program = Path(str(args[0]))
    if program.is_relative_to(SIDE_VENVS):  # SIDE_VENVS/NAME/venv/bin/python
        env["PYTHONPYCACHEPREFIX"] = str(program.parents[2] / "pycache")
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and done.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done


@contextlib.contextmanager
def side_venv(name: str, *install: object) -> Iterator[Path]:
    """A venv made afresh at ``SIDE_VENVS/name`` (this Python) with ``uv pip install *install``; yields its python.

    The venv is locked while the block runs. Its ``pycache`` keeps only the bytecode of the venv's own
    files: that of other paths (an editable install from an earlier clone) is dropped.
    """
    root = SIDE_VENVS / name
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the same job of another run on this machine waits here
        venv = root / "venv"
        run([*UV, "venv", "--quiet", "--clear", "--python", sys.executable, venv], root)
        python = venv / "bin" / "python"
        run([*UV, "pip", "install", "--quiet", "--python", python, *install], root)
        _keep_only(root / "pycache", venv)
        yield python


def _keep_only(prefix: Path, venv: Path) -> None:
    """Remove everything under the bytecode ``prefix`` but its mirror of ``venv`` (``prefix/<venv's path>``)."""
    level = prefix
    for part in venv.relative_to(venv.anchor).parts:
        if not level.is_dir():
            return
        for child in level.iterdir():
            if child.name != part:
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        level = level / part


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


def installed(python: Path) -> dict[str, str]:
    """The distributions installed in ``python``'s venv, ``{normalized name: version}``, read from their metadata
    (without starting that python: importing torch to ask its version takes 2 s)."""
    (site,) = Path(python).parents[1].glob("lib/python*/site-packages")
    found = importlib.metadata.distributions(path=[str(site)])
    return {dist.metadata["Name"].lower().replace("_", "-"): dist.version for dist in found}


#: ``python -m pytest``, ending without the interpreter's teardown once pytest's exit handlers have run, as the
#: ``envhub`` command does (``envhub.cli.quick_exit``, in every venv that runs the tests): freeing what jax, torch
#: and the backends allocated takes a subprocess 1-2 s that no test needs. ``[python, *PYTEST, *args]``.
PYTEST = (
    "-c",
    "import sys\n"
    "from envhub.cli.quick_exit import end_after_exit_handlers\n"
    "code = [None]\n"
    "end_after_exit_handlers(code)  # registered before pytest's exit handlers, so it runs after them\n"
    "import pytest\n"
    "code[0] = int(pytest.main(sys.argv[1:]))\n",
)


def pytest_in(python: Path, *args: object) -> Report:
    """Run pytest with ``python`` in the repository root on ``args`` (no xdist: one process)."""
    xml = Path(python).parents[1] / "junit.xml"
    done = run(
        [python, *PYTEST, "-q", "-p", "no:cacheprovider", "-o", "addopts=-ra", f"--junitxml={xml}", *args],
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
