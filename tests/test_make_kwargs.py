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
from envhub.core.kwargs import OTHERS, Kwarg, describe, from_signature, matches, time_limit_kwargs
from envhub.errors import EnvhubError, PluginLoadError
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
