"""The release as a user gets it: build every distribution, install from the built folder into fresh
virtual environments outside the source tree, run ``envhub list`` and one jitted step in each.

This is CI's release job (it needs the package index for jax, gymnax and envpool; envhub's own
distributions come only from the built folder). ``-m "not release"`` skips it offline.
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from side_venv import UV
from side_venv import run as _run

import envhub

ROOT = Path(__file__).resolve().parents[1]
VERSION = envhub.__version__
BACKENDS = ("gymnax", "envpool", "")  # "": the core alone

STEP = """
import jax, envhub
env = envhub.make({env_id!r}, num_envs=2)
state, ts = env.init(jax.random.key(0))
state, ts = jax.jit(env.step)(jax.random.key(1), state, env.action_space.sample(jax.random.key(2)))
print(envhub.__file__, ts.obs.shape, ts.reward.dtype, ts.terminated.dtype)
env.close()
"""


def _install(tmp: Path, dist: Path, backend: str) -> Path:
    """A fresh venv holding envhub[backend] from ``dist`` only (exact versions: never PyPI's unrelated envhub)."""
    venv = tmp / f"venv-{backend or 'core'}"
    _run([*UV, "venv", "--quiet", "--python", sys.executable, str(venv)], tmp)
    _run(
        [*UV, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), "--find-links", str(dist),
         *([f"envhub[{backend}]=={VERSION}", f"envhub-{backend}=={VERSION}"] if backend else [f"envhub=={VERSION}"])],
        tmp,
    )  # fmt: skip
    return venv


@pytest.mark.release
def test_built_distributions_install_and_run_outside_the_tree(tmp_path):
    dist = tmp_path / "dist"
    _run([sys.executable, str(ROOT / "scripts" / "build_release.py"), "--out", str(dist)], tmp_path)
    with ThreadPoolExecutor(3) as pool:
        venvs = dict(zip(BACKENDS, pool.map(lambda b: _install(tmp_path, dist, b), BACKENDS)))
    core = venvs.pop("")

    for backend, venv in venvs.items():
        rows = json.loads(_run([venv / "bin" / "envhub", "list", "--json"], tmp_path).stdout)
        assert rows == [
            {
                "prefix": backend,
                "distribution": f"envhub-{backend}",
                "version": VERSION,
                "status": "ok",
                "reason": "",
                "api": 1,
            }
        ], rows
        out = _run([venv / "bin" / "python", "-c", STEP.format(env_id=f"{backend}/CartPole-v1")], tmp_path).stdout
        where, *rest = out.split()
        assert Path(where).is_relative_to(venv) and " ".join(rest) == "(2, 4) float32 bool", out

    # The core alone (jax, numpy, pluggy: nothing undeclared), and bad input, each one line with the fix:
    # a backend that is not installed, a plugin without its library.
    assert "No envhub backends installed" in _run([core / "bin" / "envhub", "list"], tmp_path).stdout
    run = _run([core / "bin" / "envhub", "info", "envpool/CartPole-v1"], tmp_path, check=False)
    assert run.returncode == 3 and len(run.stderr.splitlines()) == 1
    assert f'pip install "envhub[envpool]>={VERSION},<0.' in run.stderr
    gymnax = venvs["gymnax"]
    _run(
        [*UV, "pip", "install", "--quiet", "--no-deps", "--python", str(gymnax / "bin" / "python"),
         "--find-links", str(dist), f"envhub-brax=={VERSION}"],
        tmp_path,
    )  # fmt: skip
    rows = {r["prefix"]: r for r in json.loads(_run([gymnax / "bin" / "envhub", "list", "--json"], tmp_path).stdout)}
    assert rows["brax"]["status"] == "missing" and 'pip install "brax<0.15,>=0.14"' in rows["brax"]["reason"]
    run = _run([gymnax / "bin" / "envhub", "info", "brax/ant"], tmp_path, check=False)
    assert run.returncode == 3 and len(run.stderr.splitlines()) == 1 and 'pip install "brax' in run.stderr, run.stderr
