"""scripts/suite_profile.py: a py-spy profile of a suite run, summed by process, test and kind of work."""

from __future__ import annotations

from pathlib import Path

import pytest
from examples_loader import load_file

suite_profile = load_file(Path(__file__).resolve().parents[1] / "scripts" / "suite_profile.py", "suite_profile")

CONTROLLER = 'process 10:".venv/bin/python -m pytest -n 2"'
WORKER = 'process 11:"/v/bin/python -u -c import sys\nexec(eval(sys.stdin.readline()))"'
TEST = "pytest_pyfunc_call (_pytest/python.py:187);test_steps (tests/test_x.py:9)"
# py-spy writes a command line's newlines as they are: this record spans three lines.
RAW = f"""\
{CONTROLLER};main (a.py:1);select (selectors.py:4) 4
{CONTROLLER};{WORKER};serve (execnet/gateway_base.py:1) 2
{CONTROLLER};{WORKER};{TEST};cache_miss (jax/_src/pjit.py:257);trace_to_jaxpr (jax/p.py:1) 50
{CONTROLLER};{WORKER};{TEST};run_check (envhub/testing/suite.py:54);check_jit (envhub/testing/checks.py:9);lower_jaxpr_to_module (jax/mlir.py:1) 25
{CONTROLLER};{WORKER};{TEST};_find_and_load (<frozen>:1);trace_to_jaxpr (jax/p.py:1) 5
{CONTROLLER};{WORKER};{TEST};process 12:"/v/bin/python -c
import jax
print(1)";<module> (<string>:2);_find_and_load (<frozen>:1) 75
"""


def test_a_multiline_command_is_one_record():
    records = list(suite_profile.samples(RAW.splitlines(keepends=True)))
    assert [count for _, count in records] == [4, 2, 50, 25, 5, 75]
    assert records[-1][0][-3].startswith('process 12:"/v/bin/python -c\\nimport jax\\nprint(1)"')


def test_samples_are_summed_by_process_test_and_kind():
    tables = suite_profile.profile(RAW.splitlines(keepends=True))
    assert {row: dict(c) for row, c in tables["process"].items()} == {
        "controller": {"other": 4, "all": 4},
        "worker": {"other": 2, "trace": 50, "lower": 25, "import": 5, "all": 82},
        "subprocess": {"import": 75, "all": 75},
    }
    tests = tables["test"]
    assert tests["test_steps"] == {"trace": 50, "import": 5, "all": 55}  # an import that traces counts as import
    assert tests["kit: check_jit"] == {"lower": 25, "all": 25}
    assert tests["(collection, fixtures, between tests)"] == {"other": 2, "all": 2}
    (command,) = tables["subprocess"]
    assert command.startswith("/v/bin/python -c\\nimport jax")


def test_a_profile_without_process_frames_is_one_worker():
    raw = [f"{TEST};trace_to_jaxpr (jax/p.py:1) 3\n", "main (a.py:1) 2\n"]
    tables = suite_profile.profile(raw)
    assert {row: dict(c) for row, c in tables["process"].items()} == {"worker": {"trace": 3, "other": 2, "all": 5}}
    assert tables["test"]["test_steps"] == {"trace": 3, "all": 3}


def test_the_report_is_in_seconds_at_the_sampling_rate(tmp_path, capsys):
    raw = tmp_path / "suite.raw"
    raw.write_text(RAW)
    assert suite_profile.main([str(raw), "--rate", "25", "--top", "1"]) == 0
    out = capsys.readouterr().out
    worker = next(line for line in out.splitlines() if line.endswith("  worker"))
    assert worker.split()[:7] == ["3.3", "0.2", "0.0", "1.0", "2.0", "0.0", "0.1"]  # 82, 5, 0, 25, 50, 0, 2 samples
    assert "(2 more rows)" in out  # --top 1 of the three processes


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.raw"], "missing.raw is not a file"),
        (["empty.raw"], "holds no py-spy stacks"),
        (["empty.raw", "--rate", "0"], "--rate and --top must be positive"),
    ],
)
def test_bad_input_is_refused_naming_it(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.raw").write_text("")
    with pytest.raises(SystemExit) as exit_info:
        suite_profile.main(args)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
