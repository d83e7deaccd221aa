"""CI's torch job: ``tests/test_interop_sb3.py`` and ``tests/test_interop_torchrl.py`` in one side venv with
``envhub[sb3,torchrl]`` and a CPU build of torch, in one pytest process (torch is imported once).

SB3, TorchRL and torch stay out of the core and of the ``test`` extra (torch from PyPI pulls ~5 GB of CUDA
wheels), so the main test venv skips those modules. A CPU torch wheel for this Python is looked for,
in order, at ``$ENVHUB_TORCH_CPU_FIND_LINKS`` (a folder or a page of links), in pip's configured
find-links, then on PyTorch's CPU index; the exact ``+cpu`` version found is pinned, so the CUDA
build on PyPI can never be picked. None found: SKIPPED, saying how to give one.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import unquote

import pytest
from packaging.tags import sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version
from side_venv import JAX_WITH_CACHE, ROOT, installed, pinned, pytest_in, side_venv

ENV_VAR = "ENVHUB_TORCH_CPU_FIND_LINKS"
CPU_INDEX = "https://download.pytorch.org/whl/cpu/torch/"


def cpu_torch_versions(location: str) -> list[Version]:
    """The versions of the CPU torch wheels for this interpreter at ``location`` (a folder or a URL)."""
    if re.match(r"https?://", location):
        try:
            with urllib.request.urlopen(location, timeout=10) as page:
                names = re.findall(r"torch-[^\"'#<>/\s]+?\.whl", unquote(page.read().decode()))
        except OSError:
            return []
    else:
        folder = Path(location.removeprefix("file://"))
        names = [path.name for path in folder.glob("torch-*.whl")] if folder.is_dir() else []
    supported, versions = set(sys_tags()), []
    for name in names:
        try:
            _, version, _, tags = parse_wheel_filename(name)
        except InvalidWheelFilename:
            continue
        if version.local == "cpu" and tags & supported:
            versions.append(version)
    return versions


def pip_find_links() -> list[str]:
    """The find-links pip is configured with (``PIP_FIND_LINKS`` and its config files)."""
    locations = os.environ.get("PIP_FIND_LINKS", "").split()
    listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    for line in listed.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".find-links"):
            locations += value.strip("'\"").split()
    return locations


def find_cpu_torch() -> tuple[str, Version] | None:
    """The first location holding a CPU torch wheel for this Python, and the newest version there."""
    places = [os.environ[ENV_VAR]] if os.environ.get(ENV_VAR) else []
    for location in [*places, *dict.fromkeys(pip_find_links()), CPU_INDEX]:
        versions = cpu_torch_versions(location)
        if versions:
            return location, max(versions)
    return None


@pytest.mark.side_venv
def test_sb3_and_torchrl_tests_pass_with_cpu_torch():
    found = find_cpu_torch()
    if found is None:
        pytest.skip(
            f"no CPU build of torch for this Python: set {ENV_VAR} to a folder (or a page of links) holding a "
            f"torch-*+cpu-*.whl, add one to pip's find-links, or make {CPU_INDEX} reachable"
        )
    location, version = found
    install = ("--find-links", location, f"torch=={version}", "-e", f"{ROOT}[sb3,torchrl,gymnax,gymnasium]", "pytest")
    with side_venv("sb3-cpu-torch", *install, *pinned(*JAX_WITH_CACHE)) as python:
        versions = installed(python)  # the CPU wheel found (its local version says so: +cpu), and SB3 beside it
        assert Version(versions["torch"]) == version and version.local == "cpu", versions.get("torch")
        assert "stable-baselines3" in versions and "torchrl" in versions, sorted(versions)

        report = pytest_in(python, ROOT / "tests" / "test_interop_sb3.py", ROOT / "tests" / "test_interop_torchrl.py")
    assert not report.failed and not report.skipped and report.passed >= 11, report
