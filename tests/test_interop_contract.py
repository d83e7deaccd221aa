"""The one contract every export follows (``envhub.interop.contract``, docs/interop.md): a closed env, an env that
drops ``final_obs``, flags, reset masks and a wrapped env's inner state refused with envhub errors naming the value
and the fix; ``close()`` leaving the env to its maker; every export pickling; the one space rule; and the lazy table.

Cheap on purpose: toy envs or made envs that are never stepped (``jax.eval_shape`` where a trace is needed), so no
new compiled program. TorchRL's and SB3's cases are in tests/test_interop_torchrl.py (their side venv)."""

from __future__ import annotations

import pickle
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub import interop, spaces
from envhub.errors import ActionError, ClosedEnvironmentError, InvalidArgumentError, MissingDependencyError
from envhub.plugin import JaxEnvironment, JaxStep
from envhub.testing.toy_envs import Corridor
from envhub.wrappers import DropFinalObs, IgnoreTruncation, RecordEpisodeStatistics

KEY = jax.random.key(0)
MPE, GAME = "jaxmarl/MPE_simple_spread_v3", "pgx/tic_tac_toe"


def cartpole(**kwargs: Any) -> Any:
    return envhub.make("gymnax/CartPole-v1", **kwargs)


#: export -> (plugins it needs here, a fitting env)
FITTING = {
    "to_gymnasium": ((), Corridor),
    "to_gymnasium_vector": (("gymnax",), lambda: cartpole(num_envs=2)),
    "to_gymnax": (("gymnax",), Corridor),
    "to_pettingzoo_parallel": (("jaxmarl",), lambda: envhub.make(MPE)),
    "to_pettingzoo_aec": (("pgx",), lambda: envhub.make(GAME)),
    "to_jaxmarl": (("jaxmarl",), lambda: envhub.make(MPE)),
}


def fitting(export: str, request: Any) -> Any:
    return FITTING[export][1]()


def each(exports: Any) -> list[Any]:
    """``exports`` as parameters, each skipped (with the reason) where a plugin its env needs is missing."""
    return [pytest.param(e, marks=pytest.mark.requires_plugin(*FITTING[e][0])) for e in sorted(exports)]


@pytest.mark.parametrize("export", each(FITTING))
def test_an_env_closed_before_the_export_is_refused_by_every_export(export, request):
    env = fitting(export, request)
    env.close()
    with pytest.raises(ClosedEnvironmentError, match=rf"^{export}\(\) called on environment '.*' after close\(\)"):
        getattr(interop, export)(env)


@pytest.mark.parametrize("export", each(set(FITTING) - {"to_jaxmarl"}))
def test_an_env_without_final_obs_is_refused_naming_dropfinalobs_where_the_target_may_bootstrap(export, request):
    env = fitting(export, request)
    with pytest.raises(
        InvalidArgumentError, match=rf"^{export}: '.*' drops final_obs \(DropFinalObs\), but .* code may "
    ):
        getattr(interop, export)(DropFinalObs(env))
    if export == "to_gymnax":
        with pytest.raises(InvalidArgumentError, match=r"drops final_obs \(IgnoreTruncation\(drop_final_obs=True\)\)"):
            interop.to_gymnax(IgnoreTruncation(env, drop_final_obs=True))
    assert getattr(interop, export)(env) is not None  # refused before anything: the env is still exportable


@pytest.mark.requires_plugin("jaxmarl")
def test_jaxmarl_takes_an_env_without_final_obs_its_contract_has_none():
    """JaxMARL's baselines never bootstrap; the observations reached are kept in the state, not in infos."""
    base = envhub.make(MPE)
    for env, kept in (interop.to_jaxmarl(base), True), (interop.to_jaxmarl(DropFinalObs(base)), False):
        _, state = jax.eval_shape(env.reset, KEY)
        actions = {a: jnp.int32(0) for a in env.agents}
        _, after, _, _, infos = jax.eval_shape(env.step, KEY, state, actions)
        assert (after.final_observation is not None) == kept and set(infos) == {"terminated", "truncated"}
        assert all(leaf.shape == (3,) for leaf in jax.tree.leaves(infos))  # one value per agent: baselines reshape


def test_flags_follow_one_rule_per_name():
    with pytest.raises(InvalidArgumentError, match=r"^seed=None must be an int from 0 to 2\*\*63 - 1\.$"):
        interop.to_gymnasium(Corridor(), seed=None)  # was: "... or None", for a None it refused
    with pytest.raises(InvalidArgumentError, match=r"^seed=\[1, 2\] must be an int from 0 to 2\*\*63 - 1\.$"):
        interop.to_gymnasium(Corridor(), seed=[1, 2])  # was taken: a vector's reset(seed=[...]) takes lists
    with pytest.raises(InvalidArgumentError, match=r"^to_gymnasium\(render_mode=5\): '<unregistered>' draws nothing"):
        interop.to_gymnasium(Corridor(), render_mode=5)


@pytest.mark.requires_plugin("jaxmarl")
def test_a_jaxmarl_flag_is_checked_before_the_env():
    with pytest.raises(InvalidArgumentError, match=r"^to_jaxmarl\(keep_final_obs=1\): give True \("):
        interop.to_jaxmarl(Corridor(), keep_final_obs=1)  # flags first, then whether the env fits


@pytest.mark.requires_plugin("gymnasium")
def test_the_gymnasium_export_of_a_host_env_checks_its_seed_and_its_envs_close():
    env = envhub.make("gymnasium/CartPole-v1")
    with pytest.raises(InvalidArgumentError, match=r"^seed=-1 must be an int from 0 to 2\*\*63 - 1\.$"):
        interop.to_gymnasium(env, seed=-1)  # was gymnasium's own error, at the first reset
    exported = interop.to_gymnasium(env)
    exported.reset(seed=0)
    exported.close()  # closes the gymnasium env it stepped directly, not the envhub env: it goes on
    assert not env.closed and exported.reset(seed=0)[0].shape == (4,)
    env.close()
    with pytest.raises(ClosedEnvironmentError, match=r"^step\(\) called on environment 'gymnasium/CartPole-v1'"):
        exported.step(0)  # was: stepped on, as if the env were open


@pytest.mark.requires_plugin("gymnax")
def test_reset_masks_of_the_wrong_dtype_or_shape_are_refused():
    venv = interop.to_gymnasium_vector(cartpole(num_envs=3), autoreset_mode="Disabled")
    for mask, shown in (
        (np.array([1, 0, 1]), r"dtype int64, shape \(3,\)"),  # was: cast to bool, silently
        (np.ones((3, 1), bool), r"dtype bool, shape \(3, 1\)"),
        ([[True], [False, True], True], r"dtype object, shape \(\)"),  # was NumPy's ValueError
    ):
        with pytest.raises(InvalidArgumentError, match=rf"the reset mask .* \({shown}\) must be a bool array of shape"):
            venv.reset(options={"reset_mask": mask})


@pytest.mark.requires_plugin("gymnax")
def test_a_wrapped_env_given_its_inner_envs_state_gets_an_envhub_error():
    base = cartpole()
    exported, params = interop.to_gymnax(RecordEpisodeStatistics(base))
    inner = jax.eval_shape(base.init, KEY)[0]  # the inner env's state (shapes only: nothing compiled)
    with pytest.raises(
        InvalidArgumentError, match=r"is wrapped \(RecordEpisodeStatistics\), and the state given is a "
    ):
        exported.step(KEY, inner, 1, params)  # was: AttributeError: 'JaxState' object has no attribute 'env_state'


class Clock(JaxEnvironment):
    """A counter whose time limit is a params leaf, ``max_timesteps`` (as craftax's and factoriax's)."""

    def __init__(self) -> None:
        super().__init__(observation_space=spaces.Box(0, 1e9, (1,)), action_space=spaces.Discrete(2))

    @property
    def default_params(self) -> Any:
        return {"max_timesteps": 9}

    @property
    def metadata(self) -> dict[str, Any]:
        return {**super().metadata, "time_limit": 9}

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        return jnp.int32(0), jnp.zeros((1,), jnp.float32)

    def _step_one(self, key: jax.Array, t: Any, action: Any, params: Any) -> JaxStep:
        obs, limit = jnp.reshape(t + 1, (1,)).astype(jnp.float32), t + 1 >= params["max_timesteps"]
        return JaxStep(state=t + 1, obs=obs, reward=jnp.float32(1), terminated=False, truncated=limit, info={})


@pytest.mark.requires_plugin("gymnax")
def test_max_steps_in_episode_follows_a_time_limit_held_in_params_under_its_own_name():
    env, params = interop.to_gymnax(Clock())
    shorter = params.replace(env_params={"max_timesteps": jnp.int32(4)})
    assert params.max_steps_in_episode == 9 and int(shorter.max_steps_in_episode) == 4  # was 9: the fixed limit
    capped = interop.to_gymnax(envhub.wrappers.TimeLimit(Clock(), 6))[1]
    assert int(capped.max_steps_in_episode) == 6


@pytest.mark.requires_plugin("gymnax")
def test_the_space_rule_maps_a_discrete_of_any_integer_dtype_to_a_discrete():
    from gymnax.environments import spaces as gymnax_spaces

    from envhub.interop.gymnax_export import to_gymnax_space

    small = to_gymnax_space(spaces.Discrete(4, dtype=np.uint8), "the action space")
    assert isinstance(small, gymnax_spaces.Discrete) and small.n == 4  # was an integer Box: rejax's DQN needs .n
    with pytest.raises(InvalidArgumentError, match=r"^to_gymnax: the action space, .* holds .*no gymnax counterpart"):
        to_gymnax_space(spaces.Tree({"odd": Odd()}), "the action space")


class Odd(spaces.Space):
    """A leaf space no export knows."""

    shape, dtype = (), np.dtype(np.int32)

    def sample(self, key: jax.Array, shape: Any = ()) -> jax.Array:
        return jnp.zeros(shape, jnp.int32)

    def contains(self, x: Any) -> jax.Array:
        return jnp.asarray(True)

    def batch(self, n: int) -> spaces.Space:
        return self


@pytest.mark.requires_plugin("jaxmarl")
def test_the_space_rule_maps_a_one_axis_multidiscrete_of_any_dtype_to_jaxmarls():
    from jaxmarl.environments import spaces as jaxmarl_spaces

    from envhub.interop.jaxmarl_export import to_jaxmarl_space

    out = to_jaxmarl_space(spaces.MultiDiscrete([2, 3], dtype=np.int8))
    assert isinstance(out, jaxmarl_spaces.MultiDiscrete)  # was an integer Box (int32 only)


@pytest.mark.requires_plugin("pgx", "jaxmarl")
def test_a_turn_based_jaxmarl_export_checks_every_agents_action():
    game = interop.to_jaxmarl(envhub.make(GAME))
    _, state = game.reset(KEY)
    mover = game.agents[int(state.current_player)]
    other = next(a for a in game.agents if a != mover)
    with pytest.raises(ActionError, match=rf"99 in \['{other}'\] is outside \[0, 9\)"):
        game.step(KEY, state, {mover: 4, other: 99})  # was played: the other's action is ignored, not unchecked


@pytest.mark.requires_plugin("gymnax")
def test_an_export_leaves_the_env_to_its_maker_and_one_that_made_it_closes_it():
    env = cartpole()
    exported = interop.to_gymnasium(env)
    exported.close()
    assert not env.closed  # was closed by the export
    import gymnasium

    ids = interop.register_gymnasium(["gymnax"])
    try:
        made = gymnasium.make("envhub/gymnax-CartPole-v1")
        made.close()  # gymnasium.make built the env: its export closes it
        assert made.unwrapped.env.closed
    finally:
        for gid in ids:
            gymnasium.registry.pop(gid, None)


@pytest.mark.requires_plugin("gymnax", "jaxmarl", "pgx")
def test_every_export_pickles_as_its_call():
    exports = [
        interop.to_gymnasium(cartpole(), seed=3),
        interop.to_gymnasium_vector(cartpole(num_envs=2), autoreset_mode="SameStep"),
        interop.to_gymnax(cartpole(), step_returns=5)[0],
        interop.to_jaxmarl(envhub.make(MPE), keep_final_obs=False),
        interop.to_pettingzoo_parallel(envhub.make(MPE), seed=2),
        interop.to_pettingzoo_aec(envhub.make(GAME)),
    ]
    for exported in exports:
        back = pickle.loads(pickle.dumps(exported))
        assert type(back) is type(exported) and back.made.flags == exported.made.flags
        assert back.env.id == exported.env.id and back.env is not exported.env  # made again by id
    with pytest.raises(envhub.errors.PicklingUnsupportedError, match=r"envhub.make did not build it"):
        pickle.dumps(interop.to_gymnax(Corridor())[0])  # the env says why


def test_the_table_lists_every_export_once_and_imports_only_what_it_needs(monkeypatch):
    """``_PUBLIC`` is the table; the ``TYPE_CHECKING`` imports (type checkers, the API reference) name the same."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(interop))
    block = next(node for node in tree.body if isinstance(node, ast.If))
    imported = {alias.name: node.module for node in block.body for alias in node.names}
    assert imported == interop._PUBLIC and interop.__all__ == sorted(imported) and "to_sb3_vec_env" in imported
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        with pytest.raises(
            MissingDependencyError, match=r"needs the Python package 'stable-baselines3'.*envhub\[sb3\]"
        ):
            interop.to_sb3_vec_env(Corridor())  # a function that says what to install (was an AttributeError)
    monkeypatch.delitem(sys.modules, "envhub.interop.gym_env", raising=False)
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # not installed
    with pytest.raises(
        MissingDependencyError, match=r"to_gymnasium needs the Python package 'gymnasium'.*\[gymnasium\]"
    ):
        interop.to_gymnasium(Corridor())  # was: ModuleNotFoundError, raised by the table's lookup
