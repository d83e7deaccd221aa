"""Plugin compatibility: the declared plugin API and the envhub range a plugin's distribution requires."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fake_dists import TOY_PLUGIN, write_dist

import envhub
from envhub.errors import PluginIncompatibleError, PluginLoadError
from envhub.registry.plugin_api import compatible_core_range, excludes_core
from envhub.testing.toy_envs import Corridor

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

    assert "old" not in registry.prefixes  # a refused registration leaves nothing behind
    assert registry.make("toy/Corridor-v0")  # the others keep working


class _Declares:
    """A plugin object whose declarations are set per test."""

    @envhub.hookimpl
    def envhub_register_envs(self, register):
        register("Corridor-v0", Corridor)


@pytest.mark.parametrize(
    "name,value,match",
    [
        ("ENVHUB_API", "1", r"declares ENVHUB_API = '1' \(str\), but it must be an int.*fix: declare ENVHUB_API = 1"),
        ("ENVHUB_API", True, r"declares ENVHUB_API = True \(bool\), but it must be an int"),
        ("ENVHUB_API", 1.0, r"declares ENVHUB_API = 1\.0 \(float\), but it must be an int"),
        (
            "wrap_object",
            5,
            r"declares wrap_object = 5 \(int\), which is not callable: envhub\.interop calls wrap_object",
        ),
        (
            "wrap_object",
            "wrap",
            r"declares wrap_object = 'wrap' \(str\), which is not callable.*envhub\.plugin\.WrapObject",
        ),
    ],
)
def test_a_declaration_of_the_wrong_type_is_incompatible_naming_the_plugin(registry, name, value, match):
    plugin = _Declares()
    setattr(plugin, name, value)
    with pytest.raises(PluginIncompatibleError, match=r"The envhub plugin 'bad' \(<in-process>\) " + match) as info:
        registry.register_backend("bad", plugin)
    assert not isinstance(info.value, TypeError)  # an envhub plugin error, not a bare TypeError
    assert "bad" not in registry.prefixes
    assert registry.make("toy/Corridor-v0")


def test_declarations_of_the_right_type_are_accepted(registry):
    plugin = _Declares()
    plugin.ENVHUB_API = 1
    plugin.wrap_object = lambda env, **kwargs: env
    registry.register_backend("good", plugin)
    assert registry.make("good/Corridor-v0").id == "good/Corridor-v0"
    assert {b.prefix: b.api for b in registry.list_backends()}["good"] == 1


def test_an_installed_plugin_declaring_a_str_api_is_an_error_row(site):
    write_dist(
        site, "fake-plugin-str", {"strapi": "fake_plugin_str"}, {"fake_plugin_str": 'ENVHUB_API = "1"\n' + TOY_PLUGIN}
    )
    registry = envhub.Registry()
    row = {b.prefix: b for b in registry.list_backends()}["strapi"]
    assert row.status == "error" and "declares ENVHUB_API = '1' (str)" in row.reason
    with pytest.raises(PluginIncompatibleError, match=r"plugin 'strapi' \(fake-plugin-str 1\.0\) declares ENVHUB_API"):
        registry.make("strapi/Corridor-v0")


def test_a_wrap_object_that_is_not_callable_never_reaches_interop():
    from envhub.interop.objects import wrap_object

    plugin = _Declares()
    plugin.wrap_object = "not a function"
    with pytest.raises(
        PluginIncompatibleError, match=r"'nowrap' \(<in-process>\) declares wrap_object = 'not a function'"
    ):
        envhub.register_backend("nowrap", plugin)
    with pytest.raises(envhub.errors.UnknownBackendError):  # refused: never registered
        wrap_object("nowrap", object())
    plugin.wrap_object = lambda env, scale=1: Corridor(length=env * scale)
    envhub.register_backend("nowrap", plugin)
    try:
        assert wrap_object("nowrap", 3, scale=2).length == 6
    finally:
        envhub.unregister_backend("nowrap")


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
