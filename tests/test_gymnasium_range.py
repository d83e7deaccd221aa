"""CI's gymnasium-range job: the gymnasium plugin's tests at both ends of the gymnasium range it declares.

The main test venv has the gymnasium gymnax allows. Here a side venv holds the core, the plugin (with
its ``render`` extra), pytest and no gymnax, with the lowest gymnasium the plugin's pyproject allows,
then the newest uv resolves in that range, and runs ``plugins/envhub-gymnasium/tests`` in it (all but envhub's
leak check, ``LEAK_CHECK``).
"""

from __future__ import annotations

import pytest
from packaging.requirements import Requirement
from packaging.version import Version
from side_venv import JAX_WITH_CACHE, ROOT, installed, pinned, pytest_in, side_venv

tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml with tomllib (Python 3.11+)")

PLUGIN = ROOT / "plugins" / "envhub-gymnasium"
(DECLARED,) = [
    Requirement(line).specifier
    for line in tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]["dependencies"]
    if Requirement(line).name == "gymnasium"
]
(LOWEST,) = [Version(spec.version) for spec in DECLARED if spec.operator == ">="]
INSTALL = ("-e", ROOT, "-e", f"{PLUGIN}[render]", "pytest", *pinned(*JAX_WITH_CACHE))
ENDS = {"lowest": f"gymnasium=={LOWEST}", "newest": f"gymnasium{DECLARED}"}  # uv resolves the highest
# envhub's own host-table leak check (1000 make/close cycles and RSS, 4.6 s a run): the main venv runs it; here it
# would add 9 s to the suite and test envhub's table, not the gymnasium version.
LEAK_CHECK = "plugins/envhub-gymnasium/tests/test_gymnasium.py::test_thousand_init_close_cycles_leave_nothing_alive"


@pytest.mark.side_venv
@pytest.mark.parametrize("end", ENDS, ids=ENDS.values())
def test_plugin_tests_pass_at_each_end_of_its_gymnasium_range(end):
    with side_venv(f"gymnasium-{end}", *INSTALL, ENDS[end]) as python:
        versions = installed(python)
        version = versions["gymnasium"]
        assert Version(version) in DECLARED and "gymnax" not in versions, (version, sorted(versions))
        assert Version(version) == LOWEST if end == "lowest" else Version(version) > LOWEST, (end, version)

        report = pytest_in(python, PLUGIN / "tests", "--deselect", LEAK_CHECK)
    assert not report.failed and report.passed > 0, report
    # a test module skipped whole would mean the plugin did not load in the side venv
    assert not [reason for reason in report.skipped if " not run: " in reason], report
