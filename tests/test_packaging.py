"""The metadata every distribution gets when built: plain requirements, one shared version."""

from __future__ import annotations

import re
from email.parser import Parser
from pathlib import Path

import pytest
from examples_loader import load_file
from packaging.requirements import Requirement

import envhub

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())
IN_REPO = (
    "ale",
    "brax",
    "craftax",
    "envpool",
    "factoriax",
    "gymnasium",
    "gymnax",
    "jaxatari",
    "jaxmarl",
    "jumanji",
    "octax",
    "pgx",
    "playground",
    "xminigrid",
)


def _built_metadata(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The METADATA hatchling writes for a wheel of ``project`` (its PEP 517 metadata hook)."""
    from hatchling import build

    monkeypatch.chdir(project)
    out = tmp_path / project.name
    out.mkdir()
    info = build.prepare_metadata_for_build_wheel(str(out))
    return Parser().parsestr((out / info / "METADATA").read_text())


def test_core_metadata_names_plugins_by_range_without_direct_references(tmp_path, monkeypatch):
    meta = _built_metadata(ROOT, tmp_path, monkeypatch)
    requires = meta.get_all("Requires-Dist")
    assert [r for r in requires if " @ " in r or "file:" in r] == []
    assert meta["Version"] == envhub.__version__
    for backend in IN_REPO:
        for extra in (backend, "all"):  # `all` leaves out, by a marker, a plugin that needs a newer Python
            named = [Requirement(r) for r in requires if Requirement(r).name == f"envhub-{backend}"]
            chosen = [r for r in named if r.marker.evaluate({"extra": extra, "python_version": "3.13"})]
            assert [str(r.specifier) for r in chosen] == [f"<0.2,>={envhub.__version__}"], (backend, extra)
    assert set(meta.get_all("Provides-Extra")) >= {*IN_REPO, "all"}
    assert {r.split(";")[0] for r in requires if "extra" not in r} == {"jax>=0.6.2", "numpy", "pluggy>=1.5"}


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_plugins_share_the_version_and_require_the_core_range(plugin, tmp_path, monkeypatch):
    meta = _built_metadata(plugin, tmp_path, monkeypatch)
    requires = meta.get_all("Requires-Dist")
    assert meta["Version"] == envhub.__version__
    assert f"envhub<1,>={envhub.__version__}" in requires  # plugin API 1: every 0.x core from this release on
    assert [r for r in requires if re.match(r"[\w.-]+(\[[^\]]*\])?\s*@", r)] == []


def test_version_script_finds_every_file_in_step():
    script = load_file(ROOT / "scripts" / "version.py", "version_script")
    assert script.root_version() == envhub.__version__
    assert script.problems() == []
    assert len(script.stamped("0.2.0")) == 2 + len(PLUGINS)  # root pyproject, _version.py, every plugin
    with pytest.raises(SystemExit, match=r"version '1.0.0' must stay below 1.0"):
        script.core_range("1.0.0")


def test_release_set_is_the_core_and_the_in_repo_plugins_without_the_template():
    script = load_file(ROOT / "scripts" / "build_release.py", "build_release")
    assert [p.name for p in script.PROJECTS[1:]] == [f"envhub-{b}" for b in IN_REPO]  # no plugins/_template
    assert script.PROJECTS[0] == ROOT and len(script.PROJECTS) == 1 + len(IN_REPO)
    words = {9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 18: "eighteen"}
    words |= {15: "fifteen", 20: "twenty", 22: "twenty-two", 24: "twenty-four", 26: "twenty-six", 28: "twenty-eight"}
    words |= {30: "thirty"}
    projects = len(script.PROJECTS)  # the docstring's count follows the set (add words past 14 projects)
    said = f"all {words[2 * projects]} files ({words[projects]} projects, two files each)"
    assert said in " ".join(script.__doc__.split()), said


def test_every_in_repo_plugin_s_tests_are_in_the_suite():
    """pytest's testpaths name every plugin folder: a plugin left out would pass CI with its tests never run."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: pytest itself requires tomli there
        import tomli as tomllib

    testpaths = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["testpaths"]
    assert sorted(p for p in testpaths if p.startswith("plugins/")) == [f"plugins/envhub-{b}" for b in sorted(IN_REPO)]


def test_the_core_knows_every_in_repo_plugin():
    """envhub's install hints (``IN_REPO_BACKENDS``) name the same plugins as the release."""
    from envhub.registry.plugin_api import IN_REPO_BACKENDS

    assert sorted(IN_REPO_BACKENDS) == list(IN_REPO)
