import sys

import numpy as np
import pytest
from fake_dists import BROKEN_PLUGIN, MISSING_BACKEND_PLUGIN, TOY_PLUGIN, write_dist

import envhub
from envhub.errors import (
    BackendNotInstalledError,
    DuplicatePrefixError,
    EnvKwargsError,
    EnvUnavailableError,
    InvalidArgumentError,
    InvalidIdError,
    PluginIncompatibleError,
    PluginLoadError,
    UnknownBackendError,
    UnknownEnvError,
)
from envhub.registry.hub import install_hint
from envhub.testing.toy_envs import Corridor, ToyPlugin

# --- in-process registration -------------------------------------------------------------------


def test_make_and_list_in_process(registry):
    env = registry.make("toy/Corridor-v0")
    assert isinstance(env, Corridor) and env.id == "toy/Corridor-v0"
    specs = registry.list_envs("toy")
    assert [(s.id, s.available) for s in specs] == [("toy/Corridor-v0", True), ("toy/Offline-v0", False)]


def test_a_refused_make_kwarg_names_the_env(registry):
    with pytest.raises(
        EnvKwargsError,
        match=r"make\('toy/Corridor-v0', \.\.\.\): unknown keyword argument lenght=3 \(did you mean 'length'",
    ):
        registry.make("toy/Corridor-v0", lenght=3)

    class Buggy:  # a backend bug raising TypeError on its own is the plugin's fault, not the user's kwargs
        @envhub.hookimpl
        def envhub_register_envs(self, register):
            register("Bug-v0", lambda **kw: (_ for _ in ()).throw(TypeError("unsupported operand")))

    registry.register_backend("buggy", Buggy())
    with pytest.raises(
        PluginLoadError,
        match=r"plugin 'buggy' \(<in-process>\) failed while making 'buggy/Bug-v0' with length=3: TypeError",
    ) as info:
        registry.make("buggy/Bug-v0", length=3)
    assert not isinstance(info.value, EnvKwargsError)


def test_prefixes_are_case_insensitive(registry):
    assert registry.make("TOY/Corridor-v0").id == "toy/Corridor-v0"
    with pytest.raises(DuplicatePrefixError, match="'toy' is claimed by both"):
        registry.register_backend("Toy", ToyPlugin())


def test_kwargs_reach_the_factory(registry):
    assert registry.make("toy/Corridor-v0", length=9).length == 9


def test_num_envs_batches_with_vmap(registry):
    env = registry.make("toy/Corridor-v0", num_envs=5)
    assert env.num_envs == 5 and env.action_space.shape == (5,) and env.single_action_space.shape == ()


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "4"])
def test_bad_num_envs(registry, bad):
    with pytest.raises(InvalidArgumentError, match=r"num_envs=.*: use None \(one environment\) or an int >= 1"):
        registry.make("toy/Corridor-v0", num_envs=bad)


def test_replace_and_unregister(registry):
    registry.register_backend("toy", ToyPlugin(), replace=True)
    registry.unregister_backend("toy")
    with pytest.raises(UnknownBackendError):
        registry.make("toy/Corridor-v0")


@pytest.mark.parametrize("bad_id", ["Corridor-v0", "toy/", "/Corridor-v0", 42])
def test_id_without_prefix(registry, bad_id):
    with pytest.raises(InvalidIdError, match=r"is not of the form 'prefix/Name'.*envhub list"):
        registry.make(bad_id)


def test_unknown_prefix_suggests_close_match(registry):
    registry.register_backend("gymnax", ToyPlugin())
    with pytest.raises(
        UnknownBackendError, match=r"No envhub backend is named 'gymnaz' \(did you mean 'gymnax'\?\).*envhub list"
    ):
        registry.make("gymnaz/CartPole-v1")


def test_unknown_name_suggests_close_match(registry):
    with pytest.raises(UnknownEnvError, match=r"has no environment 'Coridor-v0' \(did you mean 'toy/Corridor-v0'"):
        registry.make("toy/Coridor-v0")


def test_unavailable_env_says_why(registry):
    with pytest.raises(EnvUnavailableError, match="'toy/Offline-v0' is listed but unavailable here: needs a download"):
        registry.make("toy/Offline-v0")


def test_envs_registered_later_are_found(registry):
    class Growing:
        names = ["A-v0"]

        @envhub.hookimpl
        def envhub_register_envs(self, register):
            for n in self.names:
                register(n, Corridor)

    plugin = Growing()
    registry.register_backend("grow", plugin)
    registry.make("grow/A-v0")
    plugin.names.append("B-v0")
    assert registry.make("grow/B-v0").id == "grow/B-v0"


@pytest.mark.parametrize(
    "register_call,match",
    [
        (lambda r: (r("X", Corridor), r("X", Corridor)), "registered twice"),
        (lambda r: r("X", Corridor, batching="sideways"), "batching='sideways'"),
        (lambda r: r("X", None), "needs a factory"),
        (lambda r: r("", Corridor), "non-empty string"),
    ],
)
def test_plugin_registration_is_validated(registry, register_call, match):
    class Bad:
        @envhub.hookimpl
        def envhub_register_envs(self, register):
            register_call(register)

    registry.register_backend("bad", Bad())
    with pytest.raises(PluginLoadError, match=f"plugin 'bad'.*{match}"):
        registry.make("bad/X")
    assert registry.make("toy/Corridor-v0")  # the others still work


def test_factory_must_return_an_environment(registry):
    class Bad:
        @envhub.hookimpl
        def envhub_register_envs(self, register):
            register("X", lambda: object())

    registry.register_backend("bad", Bad())
    with pytest.raises(PluginLoadError, match="returned object, not an envhub.Environment"):
        registry.make("bad/X")


def test_misspelled_hookimpl_is_refused(registry):
    class Typo:
        @envhub.hookimpl
        def envhub_register_env(self, register):  # missing the final "s"
            pass

    with pytest.raises(PluginLoadError, match="plugin 'typo'"):
        registry.register_backend("typo", Typo())
    assert "typo" not in registry.prefixes  # nothing half-registered
    assert [b.prefix for b in registry.list_backends()] == ["toy"]


class _Old:
    ENVHUB_API = 2

    @envhub.hookimpl
    def envhub_register_envs(self, register):
        pass


@pytest.mark.parametrize(
    "prefix,plugin,replace,error,match",
    [
        ("bad/prefix", ToyPlugin(), False, InvalidArgumentError, r"Backend prefix 'bad/prefix' must be letters"),
        ("toy", ToyPlugin(), False, DuplicatePrefixError, r"'toy' is claimed by both '<in-process>' and"),
        (
            "toy",
            _Old(),
            True,
            PluginIncompatibleError,
            r"plugin 'toy' \(<in-process>\) was written for envhub plugin API 2",
        ),
        (
            "new",
            _Old(),
            False,
            PluginIncompatibleError,
            r"plugin 'new' \(<in-process>\) was written for envhub plugin API 2",
        ),
    ],
)
def test_a_refused_registration_changes_nothing(registry, prefix, plugin, replace, error, match):
    toy = registry.plugin("toy")
    with pytest.raises(error, match=match):
        registry.register_backend(prefix, plugin, replace=replace)
    assert registry.prefixes == ["toy"] and registry.plugin("toy") is toy  # a replaced backend is kept
    assert [(b.prefix, b.status) for b in registry.list_backends()] == [("toy", "ok")]
    assert registry.make("toy/Corridor-v0").id == "toy/Corridor-v0"
    registry.register_backend("new", ToyPlugin())  # the prefix is free: nothing was left under it
    assert registry.make("new/Corridor-v0").id == "new/Corridor-v0"


def test_one_plugin_object_under_two_prefixes_is_refused_cleanly(registry):
    with pytest.raises(PluginLoadError, match=r"plugin 'again' \(<in-process>\) failed: ValueError: Plugin already"):
        registry.register_backend("again", registry.plugin("toy"))
    assert registry.prefixes == ["toy"]
    assert registry.make("toy/Corridor-v0").id == "toy/Corridor-v0"  # toy's hooks are still registered


# --- entry-point discovery (real importlib.metadata, fake installed distributions) -------------


def test_entry_points_are_discovered_but_loaded_only_when_used(site):
    write_dist(site, "fake-plugin-a", {"fakea": "fake_plugin_a"}, {"fake_plugin_a": TOY_PLUGIN})
    registry = envhub.Registry()
    assert "fakea" in registry.prefixes and "fake_plugin_a" not in sys.modules
    env = registry.make("fakea/Corridor-v0")
    assert env.id == "fakea/Corridor-v0" and "fake_plugin_a" in sys.modules


def test_entry_point_names_are_case_insensitive(site):
    write_dist(site, "fake-plugin-m", {"MiXed": "fake_plugin_m"}, {"fake_plugin_m": TOY_PLUGIN})
    assert envhub.Registry().make("mixed/Corridor-v0").id == "mixed/Corridor-v0"


def test_failing_plugin_is_isolated_and_reported(site):
    write_dist(site, "fake-plugin-ok", {"fakeok": "fake_plugin_ok"}, {"fake_plugin_ok": TOY_PLUGIN})
    write_dist(site, "fake-plugin-broken", {"fakebroken": "fake_plugin_broken"}, {"fake_plugin_broken": BROKEN_PLUGIN})
    registry = envhub.Registry()
    rows = {b.prefix: b for b in registry.list_backends()}
    assert rows["fakebroken"].status == "error" and "boom at import" in rows["fakebroken"].reason
    assert rows["fakeok"].status == "ok"
    with pytest.raises(
        PluginLoadError, match=r"plugin 'fakebroken' \(fake-plugin-broken\) failed: RuntimeError: boom at import"
    ):
        registry.make("fakebroken/X")
    assert registry.make("fakeok/Corridor-v0")


def test_missing_backend_library_gives_the_pip_line(site):
    write_dist(
        site,
        "fake-plugin-nolib",
        {"nolib": "fake_plugin_nolib"},
        {"fake_plugin_nolib": MISSING_BACKEND_PLUGIN},
        requires=("not-a-real-backend-lib",),
    )
    registry = envhub.Registry()
    with pytest.raises(
        BackendNotInstalledError,
        match=r"needs the Python package 'not_a_real_backend_lib'.*pip install \"not-a-real-backend-lib\"",
    ):
        registry.make("nolib/X")
    assert {b.prefix: b.status for b in registry.list_backends()}["nolib"] == "missing"


def test_missing_requirement_is_seen_from_metadata_alone(site):
    write_dist(
        site,
        "fake-plugin-req",
        {"fakereq": "fake_plugin_req"},
        {"fake_plugin_req": TOY_PLUGIN},
        requires=("definitely-not-installed-lib>=1", "other-lib ; extra == 'x'"),
    )
    row = {b.prefix: b for b in envhub.Registry().list_backends()}["fakereq"]
    assert row.status == "missing" and "definitely-not-installed-lib" in row.reason and "other-lib" not in row.reason


def test_in_repo_backends_get_the_extra_as_install_hint():
    assert install_hint("gymnax", "envhub-gymnax", "gymnax") == 'pip install "envhub[gymnax]>=0.1.0,<1"'
    assert install_hint("gymnax", "someone-elses-gymnax", "gymnax") == "pip install gymnax"


def test_two_distributions_one_prefix(site):
    write_dist(site, "fake-plugin-one", {"dup": "fake_plugin_one"}, {"fake_plugin_one": TOY_PLUGIN})
    write_dist(site, "fake-plugin-two", {"Dup": "fake_plugin_two"}, {"fake_plugin_two": TOY_PLUGIN})
    registry = envhub.Registry()
    with pytest.raises(
        DuplicatePrefixError, match=r"'dup' is claimed by both 'fake-plugin-(one|two)' and 'fake-plugin-(one|two)'"
    ):
        registry.make("dup/Corridor-v0")
    row = {b.prefix: b for b in registry.list_backends()}["dup"]
    assert row.status == "error" and "fake-plugin-one" in row.reason and "fake-plugin-two" in row.reason


def test_disable_autoload(site, monkeypatch):
    write_dist(site, "fake-plugin-a", {"fakea": "fake_plugin_a"}, {"fake_plugin_a": TOY_PLUGIN})
    monkeypatch.setenv("ENVHUB_DISABLE_PLUGIN_AUTOLOAD", "1")
    registry = envhub.Registry()
    assert registry.prefixes == []
    registry.register_backend("toy", ToyPlugin())  # in-process still works
    assert registry.prefixes == ["toy"]


def test_envhub_plugins_selects_entry_points(site, monkeypatch):
    write_dist(site, "fake-plugin-a", {"fakea": "fake_plugin_a"}, {"fake_plugin_a": TOY_PLUGIN})
    write_dist(site, "fake-plugin-b", {"fakeb": "fake_plugin_a"})
    monkeypatch.setenv("ENVHUB_PLUGINS", "fakeb, FAKEA")
    assert set(envhub.Registry().prefixes) == {"fakea", "fakeb"}
    monkeypatch.setenv("ENVHUB_PLUGINS", "fakeb")
    assert envhub.Registry().prefixes == ["fakeb"]


@pytest.mark.parametrize("prefix", [5, None])
def test_a_prefix_that_is_not_a_str_is_refused_naming_it(registry, prefix):
    not_a_str = rf"Backend prefix {prefix!r} \({type(prefix).__name__}\) is not a str; use a prefix such as 'gymnax'"
    with pytest.raises(InvalidArgumentError, match=not_a_str):
        registry.list_envs(prefix)
    with pytest.raises(InvalidArgumentError, match=not_a_str):
        registry.unregister_backend(prefix)
    with pytest.raises(InvalidIdError, match=rf"Environment id {prefix!r} is not of the form 'prefix/Name'"):
        registry.make(prefix)


def test_a_numpy_int_num_envs_is_a_count(registry):
    env = registry.make("toy/Corridor-v0", num_envs=np.int64(4))
    assert env.num_envs == 4 and type(env.num_envs) is int
    with pytest.raises(InvalidArgumentError, match=r"num_envs=(np\.)?True_?: use None \(one environment\) or an int >= 1"):
        registry.make("toy/Corridor-v0", num_envs=np.bool_(True))


@pytest.mark.requires_plugin("gymnax")
def test_a_numpy_int_num_envs_is_a_count_for_a_natively_batched_env():
    env = envhub.make("gymnax/CartPole-v1", num_envs=np.int64(4))
    assert env.num_envs == 4 and type(env.num_envs) is int
