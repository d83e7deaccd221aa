"""Plugin compatibility: the declared plugin API and the envhub range a plugin's distribution requires."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fake_dists import TOY_PLUGIN, write_dist

import envhub
from envhub.errors import PluginIncompatibleError, PluginLoadError
from envhub.plugin_api import compatible_core_range, excludes_core

OLD_API_PLUGIN = "ENVHUB_API = 0\n" + TOY_PLUGIN
GOOD_PLUGIN = "ENVHUB_API = 1\n" + TOY_PLUGIN


def test_old_api_plugin_is_refused_and_the_good_one_works(site):
    write_dist(
        site, "fake-plugin-old", {"old": "fake_plugin_old"}, {"fake_plugin_old": OLD_API_PLUGIN}, version="0.3.0"
    )
    write_dist(site, "fake-plugin-good", {"good": "fake_plugin_good"}, {"fake_plugin_good": GOOD_PLUGIN})
    registry = envhub.Registry()
    rows = {b.prefix: b for b in registry.list_backends()}
    assert (rows["old"].status, rows["old"].api) == ("error", 0)
    assert "written for envhub plugin API 0" in rows["old"].reason
    assert (rows["good"].status, rows["good"].api, rows["good"].version) == ("ok", 1, "1.0")
    with pytest.raises(
        PluginLoadError,
        match=r"plugin 'old' \(fake-plugin-old 0\.3\.0\) was written for envhub plugin API 0, but this envhub "
        r"\(0\.1\.0\) supports plugin API 1; .*pip install -U fake-plugin-old",
    ):
        registry.make("old/Corridor-v0")
    assert registry.make("good/Corridor-v0").id == "good/Corridor-v0"


def test_plugin_outside_its_core_range_is_refused_before_import(site):
    write_dist(
        site,
        "fake-plugin-future",
        {"future": "fake_plugin_future"},
        {"fake_plugin_future": GOOD_PLUGIN},
        requires=("envhub>=0.3,<0.4", "numpy"),
        version="0.3.1",
    )
    write_dist(
        site,
        "fake-plugin-fits",
        {"fits": "fake_plugin_fits"},
        {"fake_plugin_fits": GOOD_PLUGIN},
        requires=("envhub>=0.1.0,<0.2",),
    )
    registry = envhub.Registry()
    with pytest.raises(
        PluginIncompatibleError,
        match=r"plugin 'future' \(fake-plugin-future 0\.3\.1\) requires envhub>=0\.3,<0\.4, but envhub 0\.1\.0 is "
        r"installed; .*pip install -U 'fake-plugin-future'.*or pip install \"envhub>=0\.3,<0\.4\"",
    ):
        registry.make("future/Corridor-v0")
    assert "fake_plugin_future" not in sys.modules  # refused from metadata alone
    row = {b.prefix: b for b in registry.list_backends()}["future"]
    assert row.status == "error" and "requires envhub>=0.3,<0.4" in row.reason
    assert registry.make("fits/Corridor-v0").id == "fits/Corridor-v0"


def test_envhub_list_shows_version_api_and_reason(site):
    write_dist(
        site, "fake-plugin-old", {"old": "fake_plugin_old"}, {"fake_plugin_old": OLD_API_PLUGIN}, version="0.3.0"
    )
    write_dist(site, "fake-plugin-good", {"good": "fake_plugin_good"}, {"fake_plugin_good": GOOD_PLUGIN})
    env = {"PYTHONPATH": f"{site}:{Path(__file__).parent}", "ENVHUB_PLUGINS": "old,good", "PATH": ""}
    run = subprocess.run([sys.executable, "-m", "envhub", "list"], capture_output=True, text=True, env=env, check=True)
    lines = run.stdout.splitlines()
    assert lines[0].split() == ["PREFIX", "DISTRIBUTION", "VERSION", "API", "STATUS"]
    assert lines[1].split() == ["good", "fake-plugin-good", "1.0", "1", "ok"]
    assert lines[2].split() == ["old", "fake-plugin-old", "0.3.0", "0", "error"]
    assert any(line.startswith("old: The envhub plugin 'old'") for line in lines)
    run = subprocess.run([sys.executable, "-m", "envhub", "list", "--json"], capture_output=True, text=True, env=env)
    assert {r["prefix"]: r["api"] for r in json.loads(run.stdout)} == {"good": 1, "old": 0}
    run = subprocess.run(
        [sys.executable, "-m", "envhub", "info", "old/Corridor-v0"], capture_output=True, text=True, env=env
    )
    assert run.returncode == 3 and len(run.stderr.splitlines()) == 1 and "plugin API 0" in run.stderr


def test_in_process_plugins_are_checked_too(registry):
    class Old:
        ENVHUB_API = 2

        @envhub.hookimpl
        def envhub_register_envs(self, register):
            pass

    with pytest.raises(
        PluginIncompatibleError, match=r"plugin 'old' \(<in-process>\) was written for envhub plugin API 2"
    ):
        registry.register_backend("old", Old())

    class Bad:
        ENVHUB_API = "1"

    with pytest.raises(PluginLoadError, match=r"ENVHUB_API = '1' must be an int"):
        registry.register_backend("bad", Bad())
    assert registry.make("toy/Corridor-v0")  # the others keep working


def test_version_and_plugin_api_on_the_command_line():
    run = subprocess.run([sys.executable, "-m", "envhub", "--version"], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == f"envhub {envhub.__version__} (plugin API 1)"


@pytest.mark.parametrize(
    "spec,excluded",
    [
        (">=0.1.0,<0.2", False),
        (">=0.1,<0.2", False),
        (">=0.2", True),
        ("<0.1", True),
        ("==0.1.*", False),
        ("==0.2.*", True),
        ("~=0.1.0", False),
        ("~=0.0.1", True),
        ("!=0.1.0", True),
        ("", False),
        ("===weird", False),
    ],
)
def test_core_range_evaluation(spec, excluded):
    assert excludes_core(spec, "0.1.0") is excluded


def test_compatible_core_range_follows_the_plugin_api_not_the_minor():
    assert compatible_core_range("0.1.0") == ">=0.1.0,<1"
    assert compatible_core_range("0.4.2") == ">=0.4.2,<1"
    assert not excludes_core(compatible_core_range("0.1.0"), "0.7.3")  # a later minor keeps API 1 plugins
