"""The set-up that lets the suite run on every supported Python and jaxlib (issue 57): the XLA flags kept
only where jaxlib knows them, the plugins that need a newer Python left out of `all` there, and the
tested matrix in docs/compatibility.md written from CI's run files."""

from __future__ import annotations

import importlib.util
import re

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest itself requires tomli there
    import tomli as tomllib
from pathlib import Path

import pytest
import xla_flags
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[1]


def _fake_jax(monkeypatch: pytest.MonkeyPatch, unknown: set[str]) -> list[str]:
    """Make xla_flags' probe start jax 'successfully' unless XLA_FLAGS holds one of ``unknown``."""
    probed: list[str] = []

    def starts(flags: str) -> tuple[bool, str]:
        probed.append(flags)
        bad = [flag for flag in flags.split() if flag in unknown]
        return (False, f"Unknown flag in XLA_FLAGS: {bad[0]}") if bad else (True, "")

    monkeypatch.setattr(xla_flags, "_starts", starts)
    return probed


def test_a_flag_jaxlib_does_not_know_is_left_out_and_the_answer_kept(monkeypatch, tmp_path):
    probed = _fake_jax(monkeypatch, unknown={"--xla_gone=false"})
    cache = tmp_path / "flags.json"
    kept, dropped = xla_flags.known_flags(["--xla_known=0", "--xla_gone=false"], "--user_flag", cache)
    assert kept == ["--xla_known=0"] and dropped == ["--xla_gone=false"]
    assert all(flags.startswith("--user_flag") for flags in probed)  # the user's own flags always go first
    probed.clear()
    assert xla_flags.known_flags(["--xla_known=0", "--xla_gone=false"], "--user_flag", cache) == (kept, dropped)
    assert probed == []  # answered from the cache file: a warm run starts no interpreter


def test_a_jax_that_cannot_start_at_all_stops_the_run_saying_why(monkeypatch, tmp_path):
    _fake_jax(monkeypatch, unknown={"--bogus"})
    with pytest.raises(SystemExit, match=r"cannot start: .*XLA_FLAGS='--bogus'.*Unknown flag .*--bogus.*unset XLA_FLAGS"):
        xla_flags.known_flags(["--xla_known=0"], "--bogus", tmp_path / "flags.json")


def test_plugins_needing_a_newer_python_are_marked_out_of_all():
    """Every plugin whose requires-python excludes a Python the core supports is left out of `all` there
    by an environment marker (else `.[all]` cannot install on it)."""
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    supported = [f"3.{minor}" for minor in range(10, 14) if SpecifierSet(core["requires-python"]).contains(f"3.{minor}")]
    in_all = {Requirement(line).name: Requirement(line) for line in core["optional-dependencies"]["all"]}
    for folder in sorted((ROOT / "plugins").glob("envhub-*")):
        needs = SpecifierSet(tomllib.loads((folder / "pyproject.toml").read_text())["project"]["requires-python"])
        marker = in_all[folder.name].marker
        for python in supported:
            wanted = needs.contains(python)
            got = marker is None or marker.evaluate({"python_version": python, "extra": ""})
            assert got == wanted, f"{folder.name} (requires-python {needs}) on Python {python}: in `all` is {got}"


def test_the_tested_matrix_in_the_docs_is_the_run_files():
    spec = importlib.util.spec_from_file_location("compat_table", ROOT / "scripts" / "compat_table.py")
    compat_table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat_table)
    runs = compat_table.load()
    assert {"main", "newest", "oldest"} <= set(runs), "benchmarks/results/compat/ lacks a CI job's run file"
    # the table shows each job's exit status; the run files are those of the last CI run before the commit
    doc = (ROOT / "docs" / "compatibility.md").read_text()
    assert compat_table.rendered(doc, runs) == doc, "run python scripts/compat_table.py"
    assert re.search(r"\| Python \| 3\.1[1-9]\.\d+ \| 3\.1[2-9]\.\d+ \| 3\.10\.\d+ \|", doc)
