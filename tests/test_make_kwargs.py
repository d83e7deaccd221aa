"""make() checks its keyword arguments before the backend sees them: one EnvKwargsError, on every backend.

The core's rules run on in-process toy plugins; each in-repo backend's declaration is tested below
(``requires_plugin``), with ``make`` only (no compile).
"""

import json
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pytest

import envhub
from envhub.cli import EXIT_ENVHUB_ERROR, EXIT_OK, main
from envhub.core.kwargs import OTHERS, Kwarg, bounds_rule, describe, from_signature, matches, time_limit_kwargs
from envhub.errors import BackendArgumentError, EnvhubError, InvalidArgumentError, PluginLoadError
from envhub.testing.toy_envs import Corridor

# --- types ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value,tp,ok",
    [
        (3, int, True),
        (np.int64(3), int, True),
        (True, int, False),
        (3.0, int, False),
        (3, float, True),
        (np.float32(0.5), float, True),
        ("3", float, False),
        (True, bool, True),
        (1, bool, False),
        (None, int | None, True),
        ("x", int | None, False),
        ("cached", Literal["real", "cached"], True),
        ("fake", Literal["real", "cached"], False),
        ((1.0, 2), tuple[float, ...], True),
        ([1.0, 2.0], tuple[float, float], True),
        ((1.0,), tuple[float, float], False),
        (("a", "b"), Sequence[str], True),
        ("ab", Sequence[str], False),
        ({"a": 1.0}, dict[str, float], True),
        ({"a": "b"}, dict[str, float], False),
        (object(), Any, True),
    ],
)
def test_matches(value, tp, ok):
    assert matches(value, tp) is ok


def test_describe():
    assert [describe(t) for t in (int | None, Literal["a", "b"], tuple[float, ...], Sequence[str], Any)] == [
        "int | None",
        "'a' | 'b'",
        "tuple[float, ...]",
        "Sequence[str]",
        "any",
    ]


def test_signature_follows_kwargs_up_the_mro_and_none_defaults_take_none():
    class Base:
        def __init__(self, required, n_frames: int = 1): ...

    class Env(Base):
        def __init__(self, size: int = 3, desc: list[str] = None, **kwargs): ...  # noqa: RUF013

    found, more = from_signature(Env)
    assert not more and list(found) == ["size", "desc", "n_frames"]  # the base's required one: the subclass's
    assert matches(None, found["desc"].type) and not matches("x", found["size"].type)


# --- the core's rules, on in-process plugins ----------------------------------------------------


def _plugin(**registrations):
    class Plugin:
        @envhub.hookimpl
        def envhub_register_envs(self, register):
            for name, (factory, options) in registrations.items():
                register(name, factory, **options)

    return Plugin()


def test_unknown_kwarg_names_env_kwarg_and_accepted(registry):
    with pytest.raises(envhub.EnvKwargsError) as info:
        registry.make("toy/Corridor-v0", lenght=3)
    message = str(info.value)
    assert "make('toy/Corridor-v0', ...): unknown keyword argument lenght=3 (did you mean 'length'?)" in message
    assert "toy/Corridor-v0 accepts length: int = 6, max_steps: int = 20, bug: str | None = None" in message
    assert info.value.kwarg == "lenght" and info.value.env_id == "toy/Corridor-v0"
    assert isinstance(info.value, EnvhubError) and isinstance(info.value, TypeError)


def test_a_typo_of_makes_own_kwargs_is_suggested_and_they_are_listed(registry):
    """make's own keywords (num_envs, mesh, validate_actions) are suggested and listed beside the factory's."""
    for typo, meant in (("num_env", "num_envs"), ("validate_action", "validate_actions"), ("meshes", "mesh")):
        with pytest.raises(envhub.EnvKwargsError) as info:
            registry.make("toy/Corridor-v0", **{typo: 8})
        message = str(info.value)
        assert f"unknown keyword argument {typo}=8 (did you mean {meant!r}?)" in message
        assert (
            "toy/Corridor-v0 accepts length: int = 6, max_steps: int = 20, bug: str | None = None, and make's own "
            "num_envs: int | None = None, mesh: any = None, validate_actions: bool | 'strict' = True; fix or drop it"
        ) in message


def test_wrong_type_and_seed_are_refused_before_the_factory(registry):
    with pytest.raises(envhub.EnvKwargsError, match=r"length='x' \(str\) is not int; toy/Corridor-v0 accepts"):
        registry.make("toy/Corridor-v0", length="x")
    with pytest.raises(envhub.EnvKwargsError, match=r"seed=1 is refused: envhub seeds every environment from the key"):
        registry.make("toy/Corridor-v0", seed=1)
    assert registry.make("toy/Corridor-v0", length=np.int32(4), max_steps=7).length == 4


def test_declared_kwargs_are_checked_lazily_with_aliases_and_others(registry):
    calls = []

    def declared():
        calls.append(1)
        return {"size": Kwarg(int, 6, "cells"), **time_limit_kwargs(20, native="max_steps")}

    built = []
    factory = lambda **kw: built.append(kw) or Corridor()  # noqa: E731
    registry.register_backend(
        "decl",
        _plugin(
            **{
                "Lazy-v0": (factory, {"kwargs": declared}),
                "Open-v0": (factory, {"kwargs": {"size": Kwarg(int, 6), OTHERS: Kwarg(doc="to the backend")}}),
            }
        ),
    )
    registry.list_envs("decl")
    assert calls == []  # listing never computes them (it may import the backend)
    registry.make("decl/Lazy-v0", size=3, max_steps=5)
    assert calls == [1] and built == [{"size": 3, "max_steps": 5}]
    with pytest.raises(
        envhub.EnvKwargsError,
        match=r"max_steps=5 and max_episode_steps=5 both given \(max_steps is an alias\): pass only max_episode_steps",
    ):
        registry.make("decl/Lazy-v0", max_steps=5, max_episode_steps=5)
    with pytest.raises(envhub.EnvKwargsError, match=r"accepts size: int = 6 \(cells\)|accepts size: int = 6, max_ep"):
        registry.make("decl/Lazy-v0", max_steps="long")
    assert len(built) == 1  # refused before the factory ran
    registry.make("decl/Open-v0", anything=1)
    with pytest.raises(envhub.EnvKwargsError, match=r"size=1.5 \(float\) is not int"):
        registry.make("decl/Open-v0", size=1.5)


def test_undeclared_plugin_falls_back_on_its_factory(registry):
    def closed(size: int = 3):
        return Corridor(length=size)

    def takes_anything(**kwargs):
        return Corridor(**kwargs)  # Corridor raises the TypeError

    registry.register_backend("third", _plugin(**{"Closed-v0": (closed, {}), "Open-v0": (takes_anything, {})}))
    with pytest.raises(envhub.EnvKwargsError, match=r"unknown keyword argument sise=4 \(did you mean 'size'\?\)"):
        registry.make("third/Closed-v0", sise=4)
    with pytest.raises(
        envhub.EnvKwargsError,
        match=r"make\('third/Open-v0', \.\.\.\): the plugin 'third' \(<in-process>\) refused colour='red': TypeError: .*"
        r"unexpected keyword argument 'colour'; check its spelling",
    ):
        registry.make("third/Open-v0", colour="red")
    assert registry.make("third/Open-v0", length=4).length == 4


def test_a_broken_declaration_is_the_plugins_fault(registry):
    def broken():
        raise RuntimeError("cannot read its config")

    registry.register_backend(
        "faulty", _plugin(**{"Raises-v0": (Corridor, {"kwargs": broken}), "Bad-v0": (Corridor, {"kwargs": lambda: 5})})
    )
    with pytest.raises(PluginLoadError, match=r"failed declaring the kwargs of 'faulty/Raises-v0': RuntimeError"):
        registry.make("faulty/Raises-v0", length=3)
    registry.make("faulty/Raises-v0")  # without kwargs nothing is checked, so nothing is computed
    with pytest.raises(PluginLoadError, match=r"kwargs declaration is 5, not a mapping of names to envhub.Kwarg"):
        registry.make("faulty/Bad-v0", length=3)
    with pytest.raises(PluginLoadError, match=r"kwargs for 'X-v0' must be a mapping"):
        registry.register_backend("faulty2", _plugin(**{"X-v0": (Corridor, {"kwargs": 5})}))
        registry.list_envs("faulty2")


@pytest.fixture
def toy_default():
    envhub.register_backend("toykw", _plugin(**{"Corridor-v0": (Corridor, {})}), replace=True)
    yield
    envhub.unregister_backend("toykw")


def test_info_lists_the_kwargs_and_a_bad_one_exits_3(toy_default, capsys):
    assert main(["info", "toykw/Corridor-v0"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "kwargs             3\n  length     int = 6\n  max_steps  int = 20\n  bug        str | None = None" in out
    assert main(["info", "toykw/Corridor-v0", "--json"]) == EXIT_OK
    info = json.loads(capsys.readouterr().out)
    assert info["kwargs"]["length"] == "int = 6" and set(info["make_kwargs"]) == {
        "num_envs",
        "mesh",
        "validate_actions",
    }
    assert main(["info", "toykw/Corridor-v0", "-k", "lenght=1"]) == EXIT_ENVHUB_ERROR
    err = capsys.readouterr().err
    assert err.startswith("envhub: error: make('toykw/Corridor-v0', ...): unknown keyword argument lenght=1")
    assert len(err.splitlines()) == 1
    assert main(["info", "toykw/Corridor-v0", "-k", "num_env=8"]) == EXIT_ENVHUB_ERROR  # the same check as make's
    assert "unknown keyword argument num_env=8 (did you mean 'num_envs'?)" in capsys.readouterr().err


# --- values out of range ------------------------------------------------------------------------


def test_bounds_rule():
    assert [bounds_rule(b) for b in ((1, None), (None, 0.5), (0.0, 1.0), (2, 2))] == [
        ">= 1",
        "<= 0.5",
        "from 0.0 to 1.0",
        "2",
    ]


def test_declared_bounds_are_checked_before_the_factory(registry):
    built = []
    table = {
        "size": Kwarg(int, 6, "cells", bounds=(2, None)),
        "ratio": Kwarg(float, 0.5, bounds=(0.0, 1.0)),
        "dim": Kwarg(int, 2, bounds=(2, 2)),
        "steps": Kwarg(int | None, None, bounds=(1, None)),
    }
    factory = lambda **kw: built.append(kw) or Corridor()  # noqa: E731
    registry.register_backend("rng", _plugin(**{"Ranged-v0": (factory, {"kwargs": table})}))
    head = r"make\('rng/Ranged-v0', \.\.\.\): "
    for kwargs, rule in [
        ({"size": 0}, r"size=0 is out of range: it must be >= 2;"),
        ({"size": np.int64(-3)}, r"size=(np.int64\()?-3\)? is out of range: it must be >= 2;"),
        ({"ratio": 1.5}, r"ratio=1.5 is out of range: it must be from 0.0 to 1.0;"),
        ({"ratio": float("nan")}, r"ratio=nan is out of range: it must be from 0.0 to 1.0;"),
        ({"dim": 3}, r"dim=3 is out of range: it must be 2;"),
        ({"steps": 0}, r"steps=0 is out of range: it must be >= 1 or None;"),
    ]:
        with pytest.raises(InvalidArgumentError, match=head + rule + r" give a value in that range") as info:
            registry.make("rng/Ranged-v0", **kwargs)
        assert "`envhub info rng/Ranged-v0` lists each keyword argument's range" in str(info.value)
    assert built == []  # refused before the factory ran
    registry.make("rng/Ranged-v0", size=10**400, ratio=np.float32(0.0), dim=2, steps=None)
    registry.make("rng/Ranged-v0", size=2, ratio=1.0, dim=2, steps=None)
    assert built[-1] == {"size": 2, "ratio": 1.0, "dim": 2, "steps": None} and len(built) == 2


def test_nan_is_refused_for_every_kwarg_and_inf_passes_where_no_bound_excludes_it(registry):
    """NaN is no value for any kwarg, declared or not (nor inside a tuple, list or dict): refused before the factory
    runs; inf stays a value (an open range such as ``(0.2, inf)``) unless declared ``bounds`` exclude it."""
    import jax.numpy as jnp

    built = []
    factory = lambda **kw: built.append(kw) or Corridor()  # noqa: E731
    declared = {"wind": Kwarg(float, 0.1), "ranges": Kwarg(Any, None), OTHERS: Kwarg(doc="to the backend")}
    registry.register_backend(
        "nan", _plugin(**{"Declared-v0": (factory, {"kwargs": declared}), "Open-v0": (factory, {})})
    )
    for made, env_id in enumerate(("nan/Declared-v0", "nan/Open-v0")):
        head = rf"^make\('{env_id}', \.\.\.\): "
        tail = rf", which no keyword argument takes; give a number \(`envhub info {env_id}` lists each keyword argument\)\.$"
        for kwargs, shown in [
            ({"wind": float("nan")}, r"wind=nan is NaN"),
            ({"wind": np.float32("nan")}, r"wind=(np.float32\()?nan\)? is NaN"),
            ({"wind": jnp.float32(jnp.nan)}, r"wind=Array\(nan, dtype=float32\) is NaN"),
            ({"other": complex("nan")}, r"other=\(nan\+0j\) is NaN"),
            ({"ranges": (0.2, float("nan"))}, r"ranges=\(0.2, nan\) holds a NaN"),
            ({"ranges": {"z": [0.2, float("nan")]}}, r"ranges=\{'z': \[0.2, nan\]\} holds a NaN"),
        ]:
            with pytest.raises(InvalidArgumentError, match=head + shown + tail):
                registry.make(env_id, **kwargs)
        assert len(built) == made  # refused before the factory ran
        registry.make(
            env_id, wind=float("inf"), ranges=(0.2, float("-inf")), other=np.float64("inf"), grid=np.full(2, np.nan)
        )
        assert built[-1]["wind"] == float("inf")  # inf passes, and arrays are the backend's to judge
    with pytest.raises(envhub.EnvKwargsError, match=r"wind='nan' \(str\) is not float"):  # the type rule first
        registry.make("nan/Declared-v0", wind="nan")


class _Windy(Corridor):
    """A corridor with a parameter: ``params['wind']`` must lie in [0, 1]."""

    def __init__(self, wind: float = 0.1, **kwargs):
        super().__init__(**kwargs)
        self.wind = wind

    @property
    def default_params(self):
        return {"wind": self.wind}

    @property
    def params_bounds(self):
        return {"params['wind']": (0.0, 1.0)}


def test_a_kwarg_setting_a_parameter_is_checked_against_params_bounds_at_make(registry):
    registry.register_backend("wind", _plugin(**{"Windy-v0": (_Windy, {})}))
    with pytest.raises(
        InvalidArgumentError,
        match=r"make\('wind/Windy-v0', \.\.\.\): wind=1.5 is out of range: it must be from 0.0 to 1.0 \(the bounds of "
        r"the parameter params\['wind'\]\); give a value in that range",
    ):
        registry.make("wind/Windy-v0", wind=1.5)
    assert registry.make("wind/Windy-v0", wind=1.0, length=3).wind == 1.0


def test_an_assertion_naming_an_argument_is_a_refusal_and_a_fixed_argument_says_so(registry):
    def asserts(*, ratio=0.5):  # as jaxmarl checks its arguments
        if not 0.0 <= ratio <= 1.0:  # `assert`, without pytest's rewriting of asserts in test modules
            raise AssertionError("ratio must be between 0.0 and 1.0")
        return Corridor()

    def broken(*, ratio=0.5):
        raise AssertionError("an internal invariant")

    def corridor_of(length, **kwargs):
        return Corridor(length=length, **kwargs)

    def fixes_length(**kwargs):  # a base's argument the env passes itself (jaxmarl's MPE and dim_c)
        return corridor_of(length=3, **kwargs)

    plugin = _plugin(**{"Asserts-v0": (asserts, {}), "Broken-v0": (broken, {}), "Fixed-v0": (fixes_length, {})})
    registry.register_backend("asrt", plugin)
    with pytest.raises(
        AssertionError,
        match=r"the plugin 'asrt' \(<in-process>\) refused ratio=2.0: AssertionError: ratio must be between 0.0 and "
        r"1.0; check its value against the backend's README",
    ) as info:
        registry.make("asrt/Asserts-v0", ratio=2.0)
    assert isinstance(info.value, BackendArgumentError) and info.value.kwarg == "ratio"
    with pytest.raises(PluginLoadError, match=r"failed while making 'asrt/Broken-v0' with ratio=2.0: AssertionError"):
        registry.make("asrt/Broken-v0", ratio=2.0)
    with pytest.raises(
        envhub.EnvKwargsError,
        match=r"refused length=5: TypeError: .*; asrt/Fixed-v0 sets length itself: leave it out\.",
    ):
        registry.make("asrt/Fixed-v0", length=5)


def test_corridor_refuses_sizes_below_one():
    for kwargs, shown in (({"length": 0}, "length=0"), ({"max_steps": -2}, "max_steps=-2")):
        with pytest.raises(InvalidArgumentError, match=rf"Corridor\({shown}\): use an int >= 1\."):
            Corridor(**kwargs)
    assert Corridor(length=np.int32(1)).length == 1


def test_info_shows_each_kwargs_range(registry, capsys):
    table = {"size": Kwarg(int, 6, "cells", bounds=(2, None)), **time_limit_kwargs(20, native="max_steps")}
    envhub.register_backend("rnginfo", _plugin(**{"Ranged-v0": (Corridor, {"kwargs": table})}), replace=True)
    try:
        assert main(["info", "rnginfo/Ranged-v0", "--json"]) == EXIT_OK
    finally:
        envhub.unregister_backend("rnginfo")
    kwargs = json.loads(capsys.readouterr().out)["kwargs"]
    assert kwargs["size"] == "int = 6, >= 2  (cells)" and kwargs["max_steps"] == "alias of max_episode_steps"


# --- every in-repo backend ----------------------------------------------------------------------


def _refused(env_id, match, **kwargs):
    with pytest.raises(envhub.EnvKwargsError, match=match) as info:
        envhub.make(env_id, **kwargs)
    assert f"make({env_id!r}, ...)" in str(info.value) and f"{env_id} accepts " in str(info.value)
    return str(info.value)


@pytest.mark.requires_plugin("gymnax")
def test_gymnax_kwargs():
    message = _refused("gymnax/CartPole-v1", r"unknown keyword argument foo=1", foo=1)
    assert (
        "gravity: float = 9.8" in message
        and "max_episode_steps: int | None = 500 (alias max_steps_in_episode)" in message
    )
    _refused("gymnax/CartPole-v1", r"max_steps_in_episode='x' \(str\) is not int \| None", max_steps_in_episode="x")
    env = envhub.make("gymnax/CartPole-v1", gravity=10, max_steps_in_episode=7)
    assert env.params.gravity == 10.0 and env.metadata["time_limit"] == 7
    with pytest.raises(InvalidArgumentError, match=r"^make\('gymnax/CartPole-v1', \.\.\.\): gravity=nan is NaN, "):
        envhub.make("gymnax/CartPole-v1", gravity=float("nan"))  # was accepted: every step's obs came out NaN
    assert envhub.make("gymnax/Catch-bsuite", rows=8, max_episode_steps=9).metadata["time_limit"] == 9


@pytest.mark.requires_plugin("brax")
def test_brax_kwargs():
    message = _refused("brax/inverted_pendulum", r"unknown keyword argument foo=1", foo=1)
    assert "max_episode_steps: int | None = 1000 (alias episode_length)" in message and "n_frames: int = 1" in message
    _refused("brax/swimmer", r"backend='mjx' \(str\) is not 'generalized' \| None", backend="mjx")
    _refused("brax/fast", r"action_repeat=2 is refused: .*envhub.wrappers.ActionRepeat", action_repeat=2)
    _refused("brax/fast", r"reset_mode='fresh' \(str\) is not 'real' \| 'cached'", reset_mode="fresh")
    assert envhub.make("brax/fast", episode_length=5, asymmetric_obs=False).max_episode_steps == 5


@pytest.mark.requires_plugin("envpool")
def test_envpool_kwargs():
    message = _refused("envpool/CartPole-v1", r"unknown keyword argument foo=1", foo=1)
    assert "max_episode_steps: int = 500" in message and "fast_path: bool = True" in message
    _refused("envpool/CartPole-v1", r"max_episode_steps='x' \(str\) is not int", max_episode_steps="x")
    _refused("envpool/CartPole-v1", r"seed=3 is refused: envhub sets it: seeds come from the key", seed=3)
    with envhub.make("envpool/CartPole-v1", max_episode_steps=7) as env:
        assert env.metadata["time_limit"] == 7


@pytest.mark.requires_plugin("gymnasium")
def test_gymnasium_kwargs():
    message = _refused("gymnasium/CartPole-v1", r"unknown keyword argument foo=1", foo=1)
    assert "sutton_barto_reward: bool = False" in message and "render_mode: 'human' | 'rgb_array' | None" in message
    _refused(
        "gymnasium/CartPole-v1", r"render_mode='rgb' \(str\) is not 'human' \| 'rgb_array' \| None", render_mode="rgb"
    )
    _refused("gymnasium/FrozenLake-v1", r"is_slippery=1 \(int\) is not bool", is_slippery=1)
    with envhub.make("gymnasium/CartPole-v1", sutton_barto_reward=True, max_episode_steps=9) as env:
        assert env.metadata["time_limit"] == 9


@pytest.mark.requires_plugin("jumanji")
def test_jumanji_kwargs():
    message = _refused("jumanji/Snake-v1", r"unknown keyword argument num_rowz=1 \(did you mean 'num_rows'", num_rowz=1)
    assert "num_rows: int = 12" in message and "max_episode_steps: int | None = 4000 (alias time_limit)" in message
    _refused("jumanji/Snake-v1", r"time_limit='x' \(str\) is not int \| None", time_limit="x")
    assert envhub.make("jumanji/Snake-v1", num_rows=6, time_limit=9).max_episode_steps == 9


@pytest.mark.requires_plugin("craftax")
def test_craftax_kwargs():
    env_id = "craftax/Craftax-Classic-Symbolic-v1"
    message = _refused(env_id, r"unknown keyword argument day_lenght=1 \(did you mean 'day_length'", day_lenght=1)
    assert "day_length: int = 300" in message and "(alias max_timesteps)" in message
    _refused(env_id, r"max_timesteps=1.5 \(float\) is not int \| None", max_timesteps=1.5)
    assert envhub.make(env_id, day_length=100, max_episode_steps=9).metadata["time_limit"] == 9


@pytest.mark.requires_plugin("xminigrid")
def test_xminigrid_kwargs():
    message = _refused("xminigrid/MiniGrid-Empty-8x8", r"unknown keyword argument heigth=1", heigth=1)
    assert "height: int = 8" in message and "(alias max_steps)" in message and "benchmark: any" not in message
    _refused("xminigrid/MiniGrid-Empty-8x8", r"height='9' \(str\) is not int", height="9")
    assert "ruleset_id: int | None = None" in _refused("xminigrid/XLand-MiniGrid-R1-9x9", "unknown", foo=1)
    assert envhub.make("xminigrid/MiniGrid-Empty-8x8", max_steps=9).metadata["time_limit"] == 9


@pytest.mark.requires_plugin("playground")
def test_playground_kwargs():
    message = _refused(
        "playground/CartpoleBalance", r"unknown keyword argument ctrl_dtt=1 \(did you mean 'ctrl_dt'", ctrl_dtt=1
    )
    assert "(alias episode_length)" in message and "config_overrides: dict | None = None" in message
    _refused(
        "playground/CartpoleBalance",
        r"impl='numpy' \(str\) is not 'jax' \| 'warp' \| 'c' \| 'cpp' \| None",
        impl="numpy",
    )
    assert envhub.make("playground/CartpoleBalance", episode_length=9).max_episode_steps == 9


# Values out of range on each in-repo backend: refused at make, naming the value and the range (each was a bare
# library exception, a PluginLoadError blaming the plugin, or accepted and broken at the first step).
OUT_OF_RANGE = [
    ("gymnax", "gymnax/CartPole-v1", {"max_episode_steps": 0}, r"max_episode_steps=0 \(gymnax's max_steps_in_episo"),
    ("gymnax", "gymnax/CartPole-v1", {"max_steps_in_episode": -5}, r"max_episode_steps=-5 .* use an int >= 1\."),
    ("gymnax", "gymnax/CartPole-v1", {"length": -1.0}, r"length=-1.0 is out of range: .*params.length"),
    ("jumanji", "jumanji/Snake-v1", {"num_rows": -5}, r"num_rows=-5 is out of range: it must be from 2 to 2048"),
    ("jumanji", "jumanji/Game2048-v1", {"board_size": 0}, r"board_size=0 is out of range: it must be from 2 to 2048"),
    (
        "xminigrid",
        "xminigrid/MiniGrid-Empty-5x5",
        {"width": -1},
        r"width=-1 is out of range: it must be from 3 to 2048",
    ),
    (
        "xminigrid",
        "xminigrid/MiniGrid-Empty-5x5",
        {"view_size": 0},
        r"view_size=0 is out of range: it must be from 1 to 2048",
    ),
    ("jaxmarl", "jaxmarl/MPE_simple_spread_v3", {"num_landmarks": -1}, r"num_landmarks=-1 is out of range"),
    ("jaxmarl", "jaxmarl/MPE_simple_spread_v3", {"dim_p": 3}, r"dim_p=3 is out of range: it must be 2;"),
    ("jaxmarl", "jaxmarl/MPE_simple_spread_v3", {"local_ratio": 2.0}, r"local_ratio=2.0 .* from 0.0 to 1.0"),
    ("jaxmarl", "jaxmarl/hanabi", {"max_life_tokens": 0}, r"max_life_tokens=0 is out of range: it must be >= 1"),
    ("jaxmarl", "jaxmarl/coin_game", {"num_outer_steps": 0}, r"num_outer_steps=0 is out of range"),
    ("octax", "octax/brix", {"fps": 0}, r"fps=0 is out of range: it must be >= 1"),
    ("octax", "octax/brix", {"max_num_steps_per_episodes": -1}, r"max_episode_steps=-1 .* use None \(no limit\) or"),
    ("octax", "octax/brix", {"fps": 800}, r"instruction_frequency=700 with fps=800 for 'octax/brix': .* >= fps"),
    ("pgx", "pgx/go_9x9", {"history_length": -1}, r"history_length=-1 is out of range: it must be >= 1"),
    (
        "pgx",
        "pgx/tic_tac_toe",
        {"max_episode_steps": 2**40},
        r"=1099511627776 is out of range: it must be <= 2147483647",
    ),
    ("jumanji", "jumanji/Snake-v1", {"time_limit": 2**31}, r"time_limit=2147483648 is out of range: .* or None;"),
    ("pgx", "pgx/minatar-breakout", {"sticky_action_prob": 1.5}, r"sticky_action_prob=1.5 .* from 0.0 to 1.0"),
    ("brax", "brax/inverted_pendulum", {"n_frames": 0}, r"n_frames=0 is out of range: it must be >= 1"),
    ("craftax", "craftax/Craftax-Classic-Symbolic-v1", {"max_timesteps": 0}, r"max_episode_steps=0 \(craftax's max_ti"),
    ("craftax", "craftax/Craftax-Classic-Symbolic-v1", {"spawn_cow_chance": 2.0}, r"spawn_cow_chance=2.0 is out"),
]


@pytest.mark.parametrize(
    "env_id,kwargs,match",
    [pytest.param(*case[1:], marks=pytest.mark.requires_plugin(case[0]), id=case[1]) for case in OUT_OF_RANGE],
)
def test_values_out_of_range_are_refused_at_make(env_id, kwargs, match):
    with pytest.raises(InvalidArgumentError, match=match):
        envhub.make(env_id, **kwargs)


@pytest.mark.requires_plugin("jaxmarl")
def test_jaxmarl_kwargs():
    _refused(
        "jaxmarl/MPE_simple_spread_v3",
        r"action_type='Foo' \(str\) is not 'Discrete' \| 'Continuous'",
        action_type="Foo",
    )
    with pytest.raises(
        envhub.EnvKwargsError,
        match=r"dim_c=1 is refused: jaxmarl/MPE_simple_spread_v3 sets dim_c itself \(passing it is jaxmarl's",
    ):
        envhub.make("jaxmarl/MPE_simple_spread_v3", dim_c=1)
    with pytest.raises(AssertionError, match=r"refused num_ranks=3: AssertionError: num_cards_of_rank must have one"):
        envhub.make("jaxmarl/hanabi", num_ranks=3)
