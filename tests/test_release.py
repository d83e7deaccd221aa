"""The release as a user gets it: build every distribution, install from the built folder into fresh
virtual environments outside the source tree (``side_venv``'s folder), run ``envhub list`` and one
jitted step in each.

This is CI's release job (it needs the package index for jax, gymnax, envpool and pytest; envhub's own
distributions come only from the built folder). ``-m "not release"`` skips it offline. It is also the
plugin API 1 compatibility job: the frozen third-party plugin in ``tests/compat`` is built as a wheel,
installed next to the core from the built wheels, and its own tests run there unchanged, from a copy.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from side_venv import PYTEST, UV, pinned, side_venv
from side_venv import run as _run

import envhub
from envhub import testing

ROOT = Path(__file__).resolve().parents[1]
VERSION = envhub.__version__
BACKENDS = ("gymnax", "envpool", "")  # "": the core alone
COMPAT = ROOT / "tests" / "compat"  # frozen: never edited to follow the core (its README)
NO_CACHE = shutil.ignore_patterns("__pycache__", ".pytest_cache")
ROW = ("prefix", "distribution", "version", "status", "reason", "api")  # `envhub list --json` (docs/cli.md)

STEP = """
import jax, envhub
env = envhub.make({env_id!r}, num_envs=2)
state, ts = env.init(jax.random.key(0))
state, ts = jax.jit(env.step)(jax.random.key(1), state, env.action_space.sample(jax.random.key(2)))
print(envhub.__file__, ts.obs.shape, ts.reward.dtype, ts.terminated.dtype)
env.close()
"""


def _install(venvs: contextlib.ExitStack, dist: Path, backend: str) -> Path:
    """A fresh venv holding envhub[backend] from ``dist`` only (exact versions: never PyPI's unrelated envhub).

    Made at a fixed place (``side_venv``), so that the bytecode of jax and the backend, compiled by the
    first process that imports them, is kept for the next run: ~3 s a venv."""
    wanted = [f"envhub[{backend}]=={VERSION}", f"envhub-{backend}=={VERSION}"] if backend else [f"envhub=={VERSION}"]
    python = venvs.enter_context(side_venv(f"release-{backend or 'core'}", "--find-links", dist, *wanted))
    return python.parents[1]


def _build_compat(tmp: Path) -> Path:
    """The compat plugin's wheel, built from a copy of ``tests/compat`` (nothing is written in the tree)."""
    source = shutil.copytree(COMPAT, tmp / "compat-src", ignore=NO_CACHE)
    _run([*UV, "build", "--quiet", "--wheel", "--out-dir", tmp / "compat-dist", source], tmp)
    (wheel,) = (tmp / "compat-dist").glob("*.whl")
    return wheel


def _run_compat_tests(tmp: Path, dist: Path, venv: Path, wheel: Path):
    """Install the compat wheel into ``venv`` (envhub only from ``dist``: no index), then run its tests from a copy."""
    python = venv / "bin" / "python"
    _run([*UV, "pip", "install", "--quiet", "--python", python, "--no-index", "--find-links", dist,
          f"envhub=={VERSION}", wheel], tmp)  # fmt: skip
    _run([*UV, "pip", "install", "--quiet", "--python", python, *pinned("pytest")], tmp)
    tests = shutil.copytree(COMPAT / "tests", tmp / "compat-tests", ignore=NO_CACHE)
    return _run([python, *PYTEST, "-q", "-rs", "-p", "no:cacheprovider", tests], tests, check=False)


@pytest.mark.release
def test_built_distributions_install_and_run_outside_the_tree(tmp_path):
    dist = tmp_path / "dist"
    with ThreadPoolExecutor(3) as pool, contextlib.ExitStack() as made:
        compat_wheel = pool.submit(_build_compat, tmp_path)
        _run([sys.executable, str(ROOT / "scripts" / "build_release.py"), "--out", str(dist)], tmp_path)
        venvs = dict(zip(BACKENDS, pool.map(lambda b: _install(made, dist, b), BACKENDS)))
        core = venvs.pop("")

        # The core alone (jax, numpy, pluggy: nothing undeclared), and bad input, each one line with the fix:
        # a backend that is not installed, a plugin without its library.
        assert "No envhub backends installed" in _run([core / "bin" / "envhub", "list"], tmp_path).stdout
        run = _run([core / "bin" / "envhub", "info", "envpool/CartPole-v1"], tmp_path, check=False)
        assert run.returncode == 3 and len(run.stderr.splitlines()) == 1
        assert f'pip install "envhub[envpool]>={VERSION},<1"' in run.stderr  # plugin API 1's range, below 1.0
        # Then the core's venv gets the compat plugin, whose tests run while the checks below use the others.
        compat = pool.submit(_run_compat_tests, tmp_path, dist, core, compat_wheel.result())

        for backend, venv in venvs.items():
            (row,) = json.loads(_run([venv / "bin" / "envhub", "list", "--json"], tmp_path).stdout)
            assert {k: row[k] for k in ROW} == {
                "prefix": backend,
                "distribution": f"envhub-{backend}",
                "version": VERSION,
                "status": "ok",
                "reason": "",
                "api": 1,
            }, row
            assert row.get("error") is None, row  # null (or, before the field, absent): no error
            out = _run([venv / "bin" / "python", "-c", STEP.format(env_id=f"{backend}/CartPole-v1")], tmp_path).stdout
            where, *rest = out.split()
            assert Path(where).is_relative_to(venv) and " ".join(rest) == "(2, 4) float32 bool", out

        gymnax = venvs["gymnax"]
        _run(
            [*UV, "pip", "install", "--quiet", "--no-deps", "--python", str(gymnax / "bin" / "python"),
             "--find-links", str(dist), f"envhub-brax=={VERSION}"],
            tmp_path,
        )  # fmt: skip
        listed = _run([gymnax / "bin" / "envhub", "list", "--json"], tmp_path).stdout
        rows = {r["prefix"]: r for r in json.loads(listed)}
        assert rows["brax"]["status"] == "missing" and 'pip install "brax<0.15,>=0.14"' in rows["brax"]["reason"]
        run = _run([gymnax / "bin" / "envhub", "info", "brax/ant"], tmp_path, check=False)
        assert run.returncode == 3 and len(run.stderr.splitlines()) == 1, run.stderr
        assert 'pip install "brax' in run.stderr, run.stderr

        # The frozen plugin's own tests, unchanged, all pass: its kit class (every check; export turned
        # off by its option_overrides, a reported skip) and its four own tests. A deprecation warning
        # is allowed: it is how API 1 announces a change.
        run = compat.result()
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    # Two reported skips: export (its option) and params (an API-1 plugin declares none; the check says so).
    expected = rf"{len(testing.CHECKS) - 2 + 4} passed, 2 skipped(, \d+ warnings?)? in [\d.]+s( \(.*\))?"
    assert re.fullmatch(expected, summary), run.stdout[-2000:]
    assert "export: Options(export=False)" in run.stdout, run.stdout[-2000:]
