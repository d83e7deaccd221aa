"""The copy-me template is a real plugin: installed as a distribution, found, checked, tested."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envhub import testing

TEMPLATE = Path(__file__).resolve().parents[1] / "plugins" / "_template"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Install the template (uv, from the test extra) into a private directory; return the env that puts it on sys.path."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "uv",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--target",
            str(target),
            str(TEMPLATE),
        ],
        check=True,
    )
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")])}


def _envhub(env, *args):
    return subprocess.run([sys.executable, "-m", "envhub", *args], capture_output=True, text=True, env=env)


def test_template_is_discovered_through_its_entry_point(installed):
    listed = _envhub(installed, "list", "--json")
    rows = {r["prefix"]: r for r in json.loads(listed.stdout)}
    assert rows["mybackend"] == {
        "prefix": "mybackend",
        "distribution": "envhub-mybackend",
        "version": "0.1.0",
        "status": "ok",
        "reason": "",
        "api": 1,
    }
    assert json.loads(_envhub(installed, "list", "mybackend", "--json").stdout)[0]["id"] == "mybackend/Chain-v0"


def test_template_passes_envhub_check(installed):
    run = _envhub(installed, "check", "mybackend/Chain-v0", "-n", "4", "--json", "-q")
    report = json.loads(run.stdout)
    assert run.returncode == 0, report
    assert report["passed"] and [c["name"] for c in report["checks"]] == list(testing.CHECKS)  # every check ran
    assert [c["name"] for c in report["checks"] if c["status"] == "skip"] == [
        "vmap"
    ]  # -n 4: batched, as TestBatchedChain


def test_template_own_tests_pass(installed):
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(TEMPLATE / "tests")],
        capture_output=True,
        text=True,
        env=installed,
        cwd=TEMPLATE,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    # two kit classes, each with every check (the batched one skips vmap), plus the template's one own test
    assert f"{2 * len(testing.CHECKS) - 1 + 1} passed, 1 skipped" in run.stdout, run.stdout[-500:]


def test_template_declares_its_kwargs_for_envhub_info(installed):
    info = json.loads(_envhub(installed, "info", "mybackend/Chain-v0", "--json").stdout)
    assert info["kwargs"]["length"] == "int = 8  (cells in the chain)"
    assert info["kwargs"]["max_steps"] == "alias of max_episode_steps"
    refused = _envhub(installed, "info", "mybackend/Chain-v0", "-k", "slip=high")
    assert refused.returncode == 3 and len(refused.stderr.splitlines()) == 1
    assert (
        "slip='high' (str) is not float; mybackend/Chain-v0 accepts length: int = 8, slip: float = 0.1"
        in refused.stderr
    )
