"""A plugin's faults stay inside it: its factory, its hooks, SystemExit at import; switches that hide plugins."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fake_dists import TOY_PLUGIN, write_dist

import envhub
from envhub.errors import PluginLoadError, UnknownBackendError
from envhub.plugin_api import IN_REPO_BACKENDS, plugin_install_line

TESTS = Path(__file__).resolve().parent

FACTORY_RAISES = """
import sys
import envhub

def broken(**kwargs):
    raise RuntimeError("the simulator's licence expired")

@envhub.hookimpl
def envhub_register_envs(register):
    register("Broken-v0", broken)
    register("Exits-v0", lambda **kwargs: sys.exit(4))
"""

HOOK_RAISES = """
import envhub

@envhub.hookimpl
def envhub_register_envs(register):
    raise RuntimeError("its registry file is corrupt")
"""

NOTE_RAISES = """
import envhub

@envhub.hookimpl
def envhub_register_envs(register):
    pass

@envhub.hookimpl
def envhub_backend_note():
    raise ValueError("the note broke")
"""

EXITS_AT_IMPORT = """
import sys
sys.exit("this plugin exits at import")
"""

INTERRUPTED_AT_IMPORT = """
raise KeyboardInterrupt
"""


def envhub_cli(site, *args, env=None):
    """Run ``python -m envhub ARGS`` with ``site`` (the fake distributions) and tests/ on the path."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ENVHUB_")}
    environ.update(PYTHONPATH=os.pathsep.join([str(site), str(TESTS)]), **(env or {}))
    return subprocess.run([sys.executable, "-m", "envhub", *args], capture_output=True, text=True, env=environ)


def one_error_line(run, code=3):
    assert run.returncode == code, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    return run.stderr


def test_a_raising_factory_names_plugin_env_and_cause(site):
    write_dist(site, "fake-plugin-fac", {"fakefac": "fake_plugin_fac"}, {"fake_plugin_fac": FACTORY_RAISES})
    write_dist(site, "fake-plugin-ok", {"fakeok": "fake_plugin_ok"}, {"fake_plugin_ok": TOY_PLUGIN})
    registry = envhub.Registry()
    with pytest.raises(
        PluginLoadError,
        match=r"The envhub plugin 'fakefac' \(fake-plugin-fac\) failed while making 'fakefac/Broken-v0' with "
        r"level=3: RuntimeError: the simulator's licence expired\. Check the keyword arguments you gave",
    ) as info:
        registry.make("fakefac/Broken-v0", level=3)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(PluginLoadError, match=r"failed while making 'fakefac/Exits-v0': SystemExit: 4\."):
        registry.make("fakefac/Exits-v0")
    assert registry.make("fakeok/Corridor-v0").id == "fakeok/Corridor-v0"  # the other plugin still works
    run = envhub_cli(site, "info", "fakefac/Broken-v0")
    assert "plugin 'fakefac'" in one_error_line(run) and "'fakefac/Broken-v0'" in run.stderr


def test_a_raising_register_hook_is_an_error_status(site):
    write_dist(site, "fake-plugin-hook", {"fakehook": "fake_plugin_hook"}, {"fake_plugin_hook": HOOK_RAISES})
    registry = envhub.Registry(only=["fakehook"])  # deep=True imports every backend's library: only this one
    reason = r"plugin 'fakehook' \(fake-plugin-hook\) failed in envhub_register_envs\(\): RuntimeError: its registry"
    rows = {b.prefix: b for b in registry.list_backends(deep=True)}
    assert rows["fakehook"].status == "error"
    assert re.search(reason, rows["fakehook"].reason)
    with pytest.raises(PluginLoadError, match=reason):
        registry.make("fakehook/Anything-v0")
    fresh = envhub.Registry()  # without deep, a hook already seen failing is reported too
    with pytest.raises(PluginLoadError, match=reason):
        fresh.list_envs("fakehook")
    assert {b.prefix: b.status for b in fresh.list_backends()}["fakehook"] == "error"

    deep = envhub_cli(site, "list", "--deep", env={"ENVHUB_PLUGINS": "fakehook"})
    assert deep.returncode == 0 and any(line.split()[::4] == ["fakehook", "error"] for line in deep.stdout.splitlines())
    assert "failed in envhub_register_envs(): RuntimeError: its registry file is corrupt" in deep.stdout
    assert "envhub_register_envs()" in one_error_line(envhub_cli(site, "list", "fakehook"))


def test_a_raising_note_hook_is_an_error_status(site):
    write_dist(site, "fake-plugin-note", {"fakenote": "fake_plugin_note"}, {"fake_plugin_note": NOTE_RAISES})
    row = {b.prefix: b for b in envhub.Registry().list_backends()}["fakenote"]
    assert row.status == "error" and "failed in envhub_backend_note(): ValueError: the note broke" in row.reason


def test_system_exit_at_import_is_that_plugins_failure(site):
    write_dist(site, "fake-plugin-exit", {"fakeexit": "fake_plugin_exit"}, {"fake_plugin_exit": EXITS_AT_IMPORT})
    write_dist(site, "fake-plugin-ok", {"fakeok": "fake_plugin_ok"}, {"fake_plugin_ok": TOY_PLUGIN})
    registry = envhub.Registry()
    rows = {b.prefix: b for b in registry.list_backends()}
    assert rows["fakeexit"].status == "error" and "SystemExit: this plugin exits at import" in rows["fakeexit"].reason
    assert rows["fakeok"].status == "ok"
    with pytest.raises(PluginLoadError, match=r"'fakeexit' \(fake-plugin-exit\) failed: SystemExit: this plugin exits"):
        registry.make("fakeexit/X-v0")
    run = envhub_cli(site, "list")
    assert run.returncode == 0 and run.stderr == ""
    table = run.stdout.split("\n\n")[0].splitlines()[1:]
    status = {line.split()[0]: line.split()[-1] for line in table}
    assert status["fakeexit"] == "error" and status["fakeok"] == "ok"


def test_a_real_keyboard_interrupt_still_interrupts(site):
    write_dist(site, "fake-plugin-int", {"fakeint": "fake_plugin_int"}, {"fake_plugin_int": INTERRUPTED_AT_IMPORT})
    run = envhub_cli(site, "list")
    assert run.returncode not in (0, 1, 2, 3) and "KeyboardInterrupt" in run.stderr and "PREFIX" not in run.stdout


TYPOS = {
    "gymnax": "gymnx",
    "gymnasium": "gymnasum",
    "envpool": "envpol",
    "brax": "bax",
    "jumanji": "jumanj",
    "craftax": "craftx",
    "xminigrid": "xminigird",
    "playground": "playgrond",
}


@pytest.mark.parametrize("prefix", IN_REPO_BACKENDS)
def test_install_hint_names_each_first_party_extra(prefix):
    registry = envhub.Registry(autoload=False)
    with pytest.raises(UnknownBackendError, match=rf'install a plugin, e\.g\. pip install "envhub\[{prefix}\]>='):
        registry.make(f"{prefix}/Something-v0")
    assert plugin_install_line(TYPOS[prefix]).startswith(f'pip install "envhub[{prefix}]>=')


def test_an_unknown_prefix_names_no_particular_extra():
    with pytest.raises(UnknownBackendError, match=r"envhub\[BACKEND\].* with BACKEND one of gymnax, gymnasium"):
        envhub.Registry(autoload=False).make("nosuchthing/X-v0")


def test_switches_that_hide_a_plugin_are_named(site, monkeypatch):
    write_dist(site, "fake-plugin-a", {"fakea": "fake_plugin_a"}, {"fake_plugin_a": TOY_PLUGIN})
    monkeypatch.setenv("ENVHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    with pytest.raises(
        UnknownBackendError,
        match=r"loaded backends: none\. The plugin 'fake-plugin-a' provides 'fakea', but "
        r"ENVHUB_DISABLE_PLUGIN_AUTOLOAD='1' hides it: unset ENVHUB_DISABLE_PLUGIN_AUTOLOAD",
    ):
        envhub.Registry().make("fakea/Corridor-v0")
    monkeypatch.delenv("ENVHUB_DISABLE_PLUGIN_AUTOLOAD")
    monkeypatch.setenv("ENVHUB_PLUGINS", "gymnax")
    with pytest.raises(
        UnknownBackendError,
        match=r"but ENVHUB_PLUGINS='gymnax' hides it: add it \(ENVHUB_PLUGINS=gymnax,fakea\) or unset ENVHUB_PLUGINS",
    ):
        envhub.Registry().make("fakea/Corridor-v0")
    with pytest.raises(UnknownBackendError, match=r"ENVHUB_PLUGINS='gymnax' is set, so envhub reads only those plugin"):
        envhub.Registry().make("notinstalled/X-v0")
    with pytest.raises(UnknownBackendError, match=r"installed backends: none\. Run `envhub list`"):
        envhub.Registry(only=["gymnax"], autoload=False).make("fakea/X")  # switches given in code are not env vars

    run = envhub_cli(site, "info", "fakea/Corridor-v0", env={"ENVHUB_PLUGINS": "gymnax"})
    assert "ENVHUB_PLUGINS='gymnax' hides it" in one_error_line(run)
    listed = envhub_cli(site, "list", env={"ENVHUB_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert listed.returncode == 0 and "ENVHUB_DISABLE_PLUGIN_AUTOLOAD='1' hides installed plugins" in listed.stdout
