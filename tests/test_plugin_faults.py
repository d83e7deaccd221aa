"""A plugin's faults stay inside it: its factory, its hooks, SystemExit at import; switches that hide plugins."""

import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fake_dists import TOY_PLUGIN, write_dist

import envhub
from envhub.errors import BackendArgumentError, EnvhubError, EnvKwargsError, PluginLoadError, UnknownBackendError
from envhub.registry.factory_errors import refusal_class
from envhub.registry.plugin_api import IN_REPO_BACKENDS, plugin_install_line

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

FACTORY_REFUSES = """
import envhub
from envhub.testing.toy_envs import Corridor

def strict(time_limit=10, level="easy", **kwargs):
    if time_limit <= 0:
        raise ValueError("time_limit must be > 0")
    {"easy": 1, "hard": 2}[level]
    return Corridor(**kwargs)

@envhub.hookimpl
def envhub_register_envs(register):
    register("Strict-v0", strict)
"""

HOOK_RAISES = """
import envhub

@envhub.hookimpl
def envhub_register_envs(register):
    raise RuntimeError("its registry file is corrupt")
"""

RAISES_AFTER_ITS_LIBRARY = """
import envhub

@envhub.hookimpl
def envhub_register_envs(register):
    import fake_plugin_backend_lib  # the backend library: `envhub list` must not import it
    raise RuntimeError(fake_plugin_backend_lib.NAME + " changed its registry")
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


def test_a_factory_refusing_the_users_argument_keeps_its_class(site):
    write_dist(site, "fake-plugin-ref", {"fakeref": "fake_plugin_ref"}, {"fake_plugin_ref": FACTORY_REFUSES})
    registry = envhub.Registry(only=["fakeref"])
    with pytest.raises(
        ValueError,
        match=r"^make\('fakeref/Strict-v0', \.\.\.\): the plugin 'fakeref' \(fake-plugin-ref\) refused time_limit=0: "
        r"ValueError: time_limit must be > 0; check its value against the backend's README \(`envhub info "
        r"fakeref/Strict-v0` lists",
    ) as info:
        registry.make("fakeref/Strict-v0", time_limit=0)
    error = info.value
    assert isinstance(error, BackendArgumentError) and isinstance(error, EnvhubError)
    assert not isinstance(error, (PluginLoadError, ImportError, TypeError))
    assert error.kwarg == "time_limit" and error.env_id == "fakeref/Strict-v0" and error.prefix == "fakeref"
    assert type(error.__cause__) is ValueError and error.original is error.__cause__
    with pytest.raises(KeyError, match=r"refused level='medium': KeyError: 'medium'; check its value") as lookup:
        registry.make("fakeref/Strict-v0", level="medium")  # a lookup repeating the value given
    assert isinstance(lookup.value, BackendArgumentError) and lookup.value.kwarg == "level"
    assert str(lookup.value).startswith("make(")  # the message, not KeyError's repr of it
    assert registry.make("fakeref/Strict-v0", time_limit=3).id == "fakeref/Strict-v0"
    run = envhub_cli(site, "info", "fakeref/Strict-v0", "-k", "time_limit=0")
    assert "refused time_limit=0: ValueError: time_limit must be > 0" in one_error_line(run)


def _factory_raising(exc):
    def factory(**kwargs):
        raise exc

    class Plugin:
        @envhub.hookimpl
        def envhub_register_envs(self, register):
            register("F-v0", factory)

    registry = envhub.Registry(autoload=False)
    registry.register_backend("f", Plugin())
    return registry


@pytest.mark.parametrize(
    "exc,kwargs,kind,match",
    [
        (
            ValueError("must be > 0"),
            {"limit": 0},
            ValueError,
            r"refused limit=0: ValueError: must be > 0; check its val",
        ),
        (ValueError("bad combo"), {"a": 1, "b": 2}, ValueError, r"refused a=1, b=2: ValueError: bad combo; check them"),
        (ValueError("b too big for a"), {"a": 1, "b": 2}, ValueError, r"refused a=1, b=2: .*; check their value"),
        (TypeError("size must be an int"), {"size": "3"}, EnvKwargsError, r"refused size='3': TypeError: size must"),
        (IndexError("level 9 out of range"), {"level": 9}, IndexError, r"refused level=9: IndexError: level 9 out of"),
        (ValueError("no default works"), {}, PluginLoadError, r"failed while making 'f/F-v0': ValueError: no default"),
        (
            TypeError("unsupported operand"),
            {"size": 3},
            PluginLoadError,
            r"while making 'f/F-v0' with size=3: TypeError",
        ),
        (
            KeyError("registry"),
            {"size": 3},
            PluginLoadError,
            r"while making 'f/F-v0' with size=3: KeyError: 'registry'",
        ),
        (AttributeError("no .step"), {"size": 3}, PluginLoadError, r"with size=3: AttributeError: no \.step"),
        (RuntimeError("size broke"), {"size": 3}, PluginLoadError, r"with size=3: RuntimeError: size broke"),
        (ImportError("size lib"), {"size": 3}, PluginLoadError, r"with size=3: ImportError: size lib"),
    ],
)
def test_which_factory_exceptions_are_the_users_arguments(exc, kwargs, kind, match):
    with pytest.raises(kind, match=match) as info:
        _factory_raising(exc).make("f/F-v0", **kwargs)
    assert isinstance(info.value, BackendArgumentError) is (kind is not PluginLoadError)
    assert kind is PluginLoadError or isinstance(info.value, type(exc))  # a refusal keeps the class raised
    assert info.value.__cause__ is exc


class _Level(ValueError):
    """A backend's own error class, with a field of its own."""

    def __init__(self, message, allowed=()):
        super().__init__(message)
        self.allowed = allowed


class _Unpicklable(ValueError):
    def __init__(self, level, allowed):  # pickle cannot rebuild it from its args
        super().__init__(f"level={level} is not one of {allowed}")


def test_a_refusal_is_built_once_per_class_and_pickles():
    first = _factory_raising(ValueError("limit must be > 0"))
    errors = []
    for registry in (first, first, _factory_raising(ValueError("limit too big"))):
        with pytest.raises(ValueError) as info:
            registry.make("f/F-v0", limit=0)
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1]) is type(errors[2]) is refusal_class(ValueError)
    assert type(errors[0]).__name__ == "BackendArgumentError[ValueError]"
    copy = pickle.loads(pickle.dumps(errors[0]))
    assert type(copy) is type(errors[0]) and str(copy) == str(errors[0])
    assert (copy.kwarg, copy.env_id, repr(copy.original)) == ("limit", "f/F-v0", repr(errors[0].original))
    with pytest.raises(_Level, match=r"refused level=7: _Level: level=7 is not one of \(1, 2\)") as info:
        _factory_raising(_Level("level=7 is not one of (1, 2)", (1, 2))).make("f/F-v0", level=7)
    assert info.value.allowed == (1, 2) and isinstance(info.value, BackendArgumentError)  # its fields are kept
    copy = pickle.loads(pickle.dumps(info.value))
    assert isinstance(copy, _Level) and copy.allowed == (1, 2) and copy.kwarg == "level"
    assert isinstance(copy.original, _Level) and str(copy) == str(info.value)
    with pytest.raises(_Unpicklable) as info:
        _factory_raising(_Unpicklable(7, (1, 2))).make("f/F-v0", level=7)
    copy = pickle.loads(pickle.dumps(info.value))  # still pickles, without the original
    assert isinstance(copy, _Unpicklable) and copy.original is None and copy.kwarg == "level"
    assert "refused level=7: _Unpicklable: level=7 is not one of (1, 2)" in str(copy)


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


def _statuses(run):
    assert run.returncode == 0 and run.stderr == "", run.stderr
    return {line.split()[0]: line.split()[-1] for line in run.stdout.split("\n\n")[0].splitlines()[1:]}


def test_envhub_list_shows_a_raising_register_hook_as_an_error_row_without_importing_backends(site):
    write_dist(site, "fake-plugin-hook", {"fakehook": "fake_plugin_hook"}, {"fake_plugin_hook": HOOK_RAISES})
    late = {"fake_plugin_late": RAISES_AFTER_ITS_LIBRARY, "fake_plugin_backend_lib": 'NAME = "fakelib 2.0"\n'}
    write_dist(site, "fake-plugin-late", {"fakelate": "fake_plugin_late"}, late)
    write_dist(site, "fake-plugin-ok", {"fakeok": "fake_plugin_ok"}, {"fake_plugin_ok": TOY_PLUGIN})
    reason = "plugin 'fakehook' (fake-plugin-hook) failed in envhub_register_envs(): RuntimeError: its registry file"
    registry = envhub.Registry(only=["fakehook", "fakelate", "fakeok"])
    rows = {b.prefix: b for b in registry.list_backends()}  # not deep
    assert rows["fakehook"].status == "error" and reason in rows["fakehook"].reason
    assert (rows["fakelate"].status, rows["fakeok"].status) == ("ok", "ok")  # fakelate's hook needs its library
    assert "fake_plugin_backend_lib" not in sys.modules
    assert registry.make("fakeok/Corridor-v0").id == "fakeok/Corridor-v0"  # probed envs are the real ones
    with pytest.raises(PluginLoadError, match=r"RuntimeError: fakelib 2\.0 changed its registry"):
        registry.make("fakelate/Anything-v0")  # make runs the hook in full
    assert {b.prefix: b.status for b in registry.list_backends()}["fakelate"] == "error"  # seen failing: shown

    switch = {"ENVHUB_PLUGINS": "fakehook,fakelate,fakeok"}
    check = ("list", "--check")  # plain `envhub list` imports no plugin: metadata alone (tests/test_cli_list.py)
    assert _statuses(envhub_cli(site, *check, env=switch)) == {"fakehook": "error", "fakelate": "ok", "fakeok": "ok"}
    assert f"fakehook: The envhub {reason}" in envhub_cli(site, *check, env=switch).stdout
    listed = {row["prefix"]: row for row in json.loads(envhub_cli(site, *check, "--json", env=switch).stdout)}
    assert set(listed["fakehook"]) == {
        "schema",
        "prefix",
        "distribution",
        "version",
        "status",
        "reason",
        "api",
        "error",
    }
    assert listed["fakehook"]["status"] == "error" and reason in listed["fakehook"]["error"]
    assert listed["fakehook"]["error"] == listed["fakehook"]["reason"]
    assert (listed["fakeok"]["status"], listed["fakeok"]["error"]) == ("ok", None)
    deep = envhub_cli(site, "list", "--deep", env=switch)
    assert _statuses(deep) == {"fakehook": "error", "fakelate": "error", "fakeok": "ok"}
    assert "RuntimeError: fakelib 2.0 changed its registry" in deep.stdout


def test_a_probed_hook_that_swallows_the_guard_is_not_reported(site):
    swallows = RAISES_AFTER_ITS_LIBRARY.replace(
        "    import fake_plugin_backend_lib  #",
        "    try:\n        import fake_plugin_swlib\n    except BaseException:\n        pass  #",
    ).replace("fake_plugin_backend_lib.NAME", "'no library'")
    write_dist(site, "fake-plugin-sw", {"fakesw": "fake_plugin_sw"}, {"fake_plugin_sw": swallows})
    write_dist(site, "fake-plugin-lib", {}, {"fake_plugin_swlib": 'NAME = "x"\n'})
    registry = envhub.Registry(only=["fakesw"])
    assert [(b.prefix, b.status) for b in registry.list_backends()] == [("fakesw", "ok")]  # it reached an import
    assert "fake_plugin_swlib" not in sys.modules
    with pytest.raises(PluginLoadError, match=r"RuntimeError: no library changed its registry"):
        registry.make("fakesw/X-v0")


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
    run = envhub_cli(site, "list", "--check")
    assert run.returncode == 0 and run.stderr == ""
    table = run.stdout.split("\n\n")[0].splitlines()[1:]
    status = {line.split()[0]: line.split()[-1] for line in table}
    assert status["fakeexit"] == "error" and status["fakeok"] == "ok"


def test_a_real_keyboard_interrupt_still_interrupts(site):
    write_dist(site, "fake-plugin-int", {"fakeint": "fake_plugin_int"}, {"fake_plugin_int": INTERRUPTED_AT_IMPORT})
    run = envhub_cli(site, "list", "--check")
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
    "pgx": "pgxx",
    "jaxmarl": "jaxmarll",
    "factoriax": "factorax",
    "octax": "octx",
    "jaxatari": "jaxatri",
    "ale": "aale",
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
