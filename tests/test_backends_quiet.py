"""Quiet by default: on every installed backend, ``make``, ``init``, one ``step`` and ``close`` print nothing.

Backends run in fresh interpreters started with ``-W default`` (every warning shown once, as a user's script or
notebook would show it); each backend's stdout must be empty (``envhub list --json`` and user programs own it) and
its stderr hold no line. The backends that share heavy libraries (brax, playground and jaxmarl: brax, mujoco,
jaxopt) each get an interpreter of their own, so that what one imports cannot hide another's noise; the others,
which share nothing that warns, take turns in one interpreter, each with its file descriptors 1 and 2 captured
apart (one interpreter instead of eleven saves about 15 s of the suite). ``sys.stdout`` and ``sys.stderr`` must
still be the caller's objects afterwards (jaxmarl 0.2.0's import sets ``sys.stdout`` to ``sys.__stdout__``, which a
notebook's is not; its plugin puts the caller's back). An interpreter runs without the modules ``WITHOUT`` names for
its backends, as a user who installed only that plugin may (mujoco printed "Failed to import warp" there).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import envhub
from envhub.registry.plugin_api import IN_REPO_BACKENDS

#: Backends given an interpreter of their own (they import libraries another backend imports too).
ALONE = ("brax", "playground", "jaxmarl")

#: Modules a backend's interpreter runs without, as a user who installed only its plugin may: warp-lang (MJX's
#: optional Warp implementation) comes with playground, not brax, and mujoco prints where it is missing.
WITHOUT = {"brax": ["warp"], "playground": ["warp"]}

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

# What a user runs, for each backend named: its output captured at the file descriptors, then restored.
WORKER = textwrap.dedent(
    """
    import json, os, sys, tempfile

    class Without:  # the modules named in sys.argv[2], as if not installed
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in json.loads(sys.argv[2]):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, Without())

    import jax

    import envhub
    from envhub.errors import EnvUnavailableError

    # the caller's own streams over the same descriptors, as a notebook's are: not sys.__stdout__/__stderr__
    caller = sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)
    report = {}
    for prefix, env_id in json.loads(sys.argv[1]):
        outs = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
        sys.stdout.flush(), sys.stderr.flush()
        saved = [os.dup(1), os.dup(2)]
        os.dup2(outs[0].fileno(), 1), os.dup2(outs[1].fileno(), 2)
        skipped = failed = None
        try:
            env = envhub.make(env_id or envhub.list_envs(prefix)[0].id, num_envs=2)
            state, _ = env.init(jax.random.key(0))
            action = env.action_space.sample(jax.random.key(1))
            jax.block_until_ready(env.step(jax.random.key(2), state, action))
            env.close()
            if (sys.stdout, sys.stderr) != caller:
                failed = f"the caller's sys.stdout or sys.stderr was replaced: {sys.stdout!r}, {sys.stderr!r}"
                sys.stdout, sys.stderr = caller
        except EnvUnavailableError as exc:
            skipped = str(exc)
        except Exception as exc:
            failed = f"{type(exc).__name__}: {exc}"
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(saved[0]), os.close(saved[1])
        printed = []
        for f in outs:
            f.seek(0)
            printed.append(f.read().decode(errors="replace"))
            f.close()
        report[prefix] = {"stdout": printed[0], "stderr": printed[1], "skipped": skipped, "failed": failed}
    print(json.dumps(report), flush=True)
    os._exit(0)  # skip the teardown that frees what jax and the backends allocated: 1-2 s an interpreter
    """
)


def _backends() -> list:
    return [pytest.param(row, id=row.prefix) for row in envhub.list_backends()]  # metadata only: imports no plugin


def test_every_in_repo_backend_has_a_representative_env():
    assert sorted(REPRESENTATIVE) == sorted(IN_REPO_BACKENDS)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict:
    """Every installed backend's report: one interpreter for each of ``ALONE``, one for the rest."""
    rows = [row for row in envhub.list_backends() if row.status == "ok"]
    jobs = [[row] for row in rows if row.prefix in ALONE] + [[row for row in rows if row.prefix not in ALONE]]
    cwd = tmp_path_factory.mktemp("quiet")
    report: dict = {"<worker>": ""}
    for job in filter(None, jobs):  # one after another: at once, they would take both cores from the other tests
        backends = json.dumps([[r.prefix, REPRESENTATIVE.get(r.prefix, "")] for r in job])
        without = json.dumps(sorted({m for r in job for m in WITHOUT.get(r.prefix, ())}))
        run = subprocess.run(
            [sys.executable, "-W", "default", "-c", WORKER, backends, without],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=300,
        )
        assert run.returncode == 0, f"the worker failed (exit {run.returncode}):\n{run.stderr}"
        lines = run.stdout.strip().splitlines()
        report.update(json.loads(lines[-1]))
        report["<worker>"] += run.stderr + "".join(line + "\n" for line in lines[:-1])
    return report


def test_the_workers_print_nothing_outside_the_backends(reports):
    assert not reports["<worker>"], reports["<worker>"]  # jax's and envhub's own import, before any backend


@pytest.mark.parametrize("row", _backends())
def test_make_init_step_print_nothing(row, reports):
    if row.status == "missing":
        pytest.skip(row.reason)
    assert row.status == "ok", row.reason
    got = reports[row.prefix]
    name = REPRESENTATIVE.get(row.prefix, row.prefix)
    if got["failed"]:
        pytest.fail(f"{name} failed: {got['failed']}\n{got['stderr']}", pytrace=False)
    if got["skipped"]:
        pytest.skip(got["skipped"])
    if got["stdout"] or got["stderr"]:
        printed = f"--- stdout:\n{got['stdout']}--- stderr:\n{got['stderr']}"
        pytest.fail(f"{name} is not quiet: make, init, step and close printed\n{printed}", pytrace=False)
