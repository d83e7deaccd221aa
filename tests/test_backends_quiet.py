"""Quiet by default: on every installed backend, ``make``, ``init``, one ``step`` and ``close`` print nothing.

Each backend runs in a fresh interpreter started with ``-W default`` (every warning shown once, as a
user's script or notebook would show it), so that what one backend imports cannot hide another's noise:
its stdout must be empty (``envhub list --json`` and user programs own it) and its stderr hold no line.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import envhub
from envhub.registry.plugin_api import IN_REPO_BACKENDS

#: A cheap env per in-repo backend; another plugin's first listed env.
REPRESENTATIVE = {
    "ale": "ale/Pong-v5",
    "brax": "brax/inverted_pendulum",
    "craftax": "craftax/Craftax-Classic-Symbolic-v1",
    "envpool": "envpool/CartPole-v1",
    "factoriax": "factoriax/MinerBootstrap-v1",
    "gymnasium": "gymnasium/CartPole-v1",
    "gymnax": "gymnax/CartPole-v1",
    "jaxatari": "jaxatari/pong",
    "jaxmarl": "jaxmarl/MPE_simple_spread_v3",
    "jumanji": "jumanji/Snake-v1",
    "octax": "octax/brix",
    "pgx": "pgx/tic_tac_toe",
    "playground": "playground/PendulumSwingup",
    "xminigrid": "xminigrid/MiniGrid-DoorKey-5x5",
}

# What a user runs. An env listed but unavailable here (jaxatari without its sprite pack) is a skip: its
# reason goes to the file named last, as stdout and stderr are what the test reads.
WORKER = textwrap.dedent(
    """
    import sys

    import jax

    import envhub
    from envhub.errors import EnvUnavailableError

    prefix, env_id, skip_file = sys.argv[1:]
    try:
        env = envhub.make(env_id or envhub.list_envs(prefix)[0].id, num_envs=2)
    except EnvUnavailableError as exc:
        with open(skip_file, "w") as f:
            f.write(str(exc))
        raise SystemExit(0)
    state, _ = env.init(jax.random.key(0))
    action = env.action_space.sample(jax.random.key(1))
    jax.block_until_ready(env.step(jax.random.key(2), state, action))
    env.close()
    """
)


def _backends() -> list:
    return [pytest.param(row, id=row.prefix) for row in envhub.list_backends()]  # metadata only: imports no plugin


def test_every_in_repo_backend_has_a_representative_env():
    assert sorted(REPRESENTATIVE) == sorted(IN_REPO_BACKENDS)


@pytest.mark.parametrize("row", _backends())
def test_make_init_step_print_nothing(row, tmp_path):
    if row.status == "missing":
        pytest.skip(row.reason)
    assert row.status == "ok", row.reason
    skip_file = tmp_path / "skip.txt"
    env_id = REPRESENTATIVE.get(row.prefix, "")
    run = subprocess.run(
        [sys.executable, "-W", "default", "-c", WORKER, row.prefix, env_id, str(skip_file)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    if run.returncode != 0:
        pytest.fail(f"{env_id or row.prefix} failed (exit {run.returncode}):\n{run.stderr}", pytrace=False)
    if skip_file.exists():
        pytest.skip(skip_file.read_text())
    if run.stdout or run.stderr:
        printed = f"--- stdout:\n{run.stdout}--- stderr:\n{run.stderr}"
        pytest.fail(
            f"{env_id or row.prefix} is not quiet: make, init, step and close printed\n{printed}", pytrace=False
        )
