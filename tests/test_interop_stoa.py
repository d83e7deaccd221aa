"""``envhub.interop.to_stoa``: Stoa's own wrapper stacks (Stoix's Anakin one, the cached and optimistic auto-resets)
run on the export unchanged; TERMINATED and TRUNCATED kept apart (discount 0 and 1); ``extras["next_obs"]`` is
envhub's ``final_obs``; ``env_params`` are data (new values, no new trace); the contract's refusals.

Cheap on purpose: one toy env with params and one compiled program (every stack and envhub's own rollout in it,
shared by the first two tests); the refusals compile nothing."""

from __future__ import annotations

import pickle
import sys
from typing import Any

import pytest

stoa = pytest.importorskip("stoa", reason="to_stoa needs stoa-env: pip install 'envhub[stoa]'")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from stoa import AddRNGKey, AutoResetWrapper, RecordEpisodeMetrics, StepType  # noqa: E402
from stoa.core_wrappers.auto_reset import CachedAutoResetWrapper  # noqa: E402
from stoa.core_wrappers.optimistic_auto_reset import OptimisticResetVmapWrapper  # noqa: E402
from stoa.core_wrappers.vmap import VmapWrapper  # noqa: E402
from stoa.env_adapters.base import AdapterStateWithKey  # noqa: E402

import envhub  # noqa: E402
from envhub import interop, spaces  # noqa: E402
from envhub.errors import (  # noqa: E402
    ClosedEnvironmentError,
    InvalidArgumentError,
    MissingDependencyError,
    PicklingUnsupportedError,
)
from envhub.plugin import JaxEnvironment, JaxStep  # noqa: E402
from envhub.testing.toy_envs import Corridor  # noqa: E402
from envhub.wrappers import DropFinalObs, RecordEpisodeStatistics  # noqa: E402

KEY = jax.random.key(0)
N, STEPS, LIMIT = 2, 10, 5
MID, TERMINATED, TRUNCATED = (int(t) for t in (StepType.MID, StepType.TERMINATED, StepType.TRUNCATED))


class Reach(JaxEnvironment):
    """A point starting at ``start`` moves ``speed`` right on action 1, left on 0; reaching ``goal`` terminates
    (reward 1), and after ``LIMIT`` steps the episode is truncated. No randomness: every stack gives one trajectory."""

    def __init__(self, num_envs: int | None = None):
        super().__init__(
            observation_space=spaces.Box(-np.inf, np.inf, (1,)),
            action_space=spaces.Discrete(2),
            num_envs=num_envs,
            max_episode_steps=LIMIT,
        )

    @property
    def default_params(self) -> Any:
        return {"goal": 1.0, "speed": 0.25, "start": 0.0}

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        x = jnp.float32(params["start"])
        return x, jnp.reshape(x, (1,))

    def _step_one(self, key: jax.Array, x: Any, action: Any, params: Any) -> JaxStep:
        x = x + params["speed"] * (2 * action - 1)
        done = x >= params["goal"]
        return JaxStep(state=x, obs=jnp.reshape(x, (1,)), reward=done.astype(jnp.float32), terminated=done,
                       truncated=False, info={"x": x})  # fmt: skip


RAW = interop.to_stoa(Reach())
STACKS = {  # Stoix's Anakin stack, and its cached and optimistic variants, as Stoix builds them
    "auto": VmapWrapper(AutoResetWrapper(RecordEpisodeMetrics(AddRNGKey(RAW)), next_obs_in_extras=True), N),
    "cached": VmapWrapper(CachedAutoResetWrapper(RecordEpisodeMetrics(AddRNGKey(RAW)), next_obs_in_extras=True), N),
    "optimistic": OptimisticResetVmapWrapper(RecordEpisodeMetrics(AddRNGKey(RAW)), N, N, next_obs_in_extras=True),
}
ACTIONS = jnp.array([1, 0])  # env 0 walks to the goal (TERMINATED at step 4), env 1 away (TRUNCATED at step 5)
TRACES = []


def rollouts(params: Any) -> Any:
    """Each stack's TimeSteps over ``STEPS`` steps on ``params``, and envhub's own batched rollout's. The stacks
    reset outside ``jit``, as Stoix does (Stoa's ``OptimisticResetVmapWrapper.reset`` cannot be traced: its
    ``if`` on a ``jnp`` bool)."""
    return scans({name: env.reset(KEY, params)[0] for name, env in STACKS.items()}, params)


@jax.jit
def scans(states: Any, params: Any) -> Any:
    TRACES.append(1)  # runs once per trace: new params values must not come back here
    out = {}
    for name, env in STACKS.items():
        out[name] = jax.lax.scan(lambda s, _, env=env: env.step(s, ACTIONS, params), states[name], None, STEPS)[1]
    envhub_env = Reach(num_envs=N)
    state, _ = envhub_env.init(KEY, params=params)
    out["envhub"] = jax.lax.scan(lambda s, k: envhub_env.step(k, s, ACTIONS), state, jax.random.split(KEY, STEPS))[1]
    return out


def defaults(**values: float) -> dict[str, jax.Array]:
    return {k: jnp.float32(values.get(k, v)) for k, v in Reach().default_params.items()}


def test_stoix_stacks_run_on_the_export_with_terminated_and_truncated_apart_and_next_obs_the_final_obs():
    out = jax.device_get(rollouts(defaults()))
    ref = out.pop("envhub")
    kinds = np.full((STEPS, N), MID)
    kinds[[3, 7], 0], kinds[[4, 9], 1] = TERMINATED, TRUNCATED  # 4 steps to the goal; the time limit at 5
    for name, ts in out.items():
        assert (ts.step_type == kinds).all(), name
        np.testing.assert_array_equal(ts.discount, np.where(kinds == TERMINATED, 0.0, 1.0), err_msg=name)
        np.testing.assert_array_equal(ts.extras["next_obs"], ref.final_obs, err_msg=name)  # what the episode reached
        np.testing.assert_array_equal(ts.observation, ref.obs, err_msg=name)  # the stack's restart: envhub's
        np.testing.assert_array_equal(ts.reward, ref.reward, err_msg=name)
        metrics = ts.extras["episode_metrics"]
        assert metrics["episode_length"][3, 0] == 4 and metrics["episode_length"][4, 1] == 5, name
        assert (metrics["is_terminal_step"] == (kinds != MID)).all(), name
    assert ref.terminated[3, 0] and ref.truncated[4, 1] and ref.final_obs[3, 0, 0] == 1.0  # the goal reached
    assert (out["auto"].extras["next_obs"][[4, 9], 1, 0] == -1.25).all()  # truncated: where PPO bootstraps from


def test_env_params_are_data_new_values_run_without_a_new_trace():
    rollouts(defaults())
    traced = len(TRACES)
    out = jax.device_get(rollouts(defaults(start=0.5, speed=0.5)))  # one step from the goal, at twice the speed
    assert len(TRACES) == traced  # the same program: params went in as data
    ts = out["auto"]
    assert ts.step_type[0, 0] == TERMINATED and ts.extras["next_obs"][0, 0, 0] == 1.0
    # Stoa's auto-reset resets without env_params: the next episode starts from the env's defaults (documented),
    # and runs on the params its steps are given: two steps of 0.5 from 0.0
    assert ts.observation[0, 0, 0] == 0.0 and ts.step_type[2, 0] == TERMINATED
    assert ts.extras["episode_metrics"]["episode_length"][2, 0] == 2


def test_a_last_step_shows_the_observation_reached_and_leaves_the_restart_to_stoa():
    state, first = RAW.reset(KEY)
    assert isinstance(state, AdapterStateWithKey) and first.step_type == StepType.FIRST and first.extras.keys() == {"x"}
    assert RAW.observation_space() == stoa.BoundedArraySpace((1,), jnp.float32, -np.inf, np.inf)
    assert RAW.action_space() == stoa.DiscreteSpace(2, jnp.int32)
    for _ in range(4):
        state, ts = RAW.step(state, 1)  # eager: envhub's own compiled step
    assert ts.terminated() and ts.observation[0] == 1.0 and ts.discount == 0.0  # reached, not the next episode's
    assert state.base_env_state.env == 1.0  # the ended episode's state: Stoa's auto-reset wrappers restart it
    given = RAW.made.env  # the env given to to_stoa still restarts in the step, as every envhub env
    env_state, _ = given.init(KEY)
    for _ in range(4):
        env_state, ts = given.step(KEY, env_state, 1)
    assert ts.terminated and ts.final_obs[0] == 1.0 and env_state.env == 0.0 and not RAW.env.closed
    given.close()
    with pytest.raises(ClosedEnvironmentError, match=r"^step\(\) called on environment"):  # its copy is closed too
        RAW.step(state, 1)
    given._closed = False  # RAW is shared by this module's tests


def test_a_box_with_one_bound_everywhere_gives_it_as_one_value_as_stoas_adapters():
    from envhub.interop.stoa_export import to_stoa_space

    space = to_stoa_space(spaces.Box(-1.0, 1.0, (3,)), "the action space")
    assert float(space.minimum) == -1.0 and float(space.maximum) == 1.0  # Stoix's continuous systems read these
    assert space.shape == (3,) and space.contains(jnp.array([-1.0, 0.0, 1.0]))
    mixed = to_stoa_space(spaces.Box(np.array([-1.0, -2.0]), np.array([1.0, 2.0])), "the action space")
    np.testing.assert_array_equal(mixed.minimum, [-1.0, -2.0])
    assert not mixed.contains(jnp.array([0.0, 3.0]))


def test_refusals_follow_the_contract_and_leave_the_env_usable():
    env = Reach()
    with pytest.raises(InvalidArgumentError, match=r"^to_stoa needs an unbatched env; .* num_envs=2: .*VmapWrapper"):
        interop.to_stoa(Reach(num_envs=2))
    two = Corridor()
    two.agents = ("a", "b")
    with pytest.raises(InvalidArgumentError, match=r"multi-agent .*to_jumanji \(Mava\) or envhub\.interop\.to_jaxmarl"):
        interop.to_stoa(two)
    host = Corridor()
    host.is_jax_native = False
    with pytest.raises(InvalidArgumentError, match=r"needs a JAX-native env; .*envhub\.interop\.sebulba_factory"):
        interop.to_stoa(host)
    with pytest.raises(InvalidArgumentError, match=r"^to_stoa: '.*' drops final_obs \(DropFinalObs\), but Stoa code"):
        interop.to_stoa(DropFinalObs(env))
    with pytest.raises(InvalidArgumentError, match=r"make it first: to_stoa\(envhub\.make\('gymnax/CartPole-v1'\)\)"):
        interop.to_stoa("gymnax/CartPole-v1")
    closed = Reach()
    closed.close()
    with pytest.raises(ClosedEnvironmentError, match=r"^to_stoa\(\) called on environment .* after close\(\)"):
        interop.to_stoa(closed)
    exported = interop.to_stoa(env)
    with pytest.raises(InvalidArgumentError, match=r"given a dict as its state, not the AdapterStateWithKey"):
        exported.step({"x": 0.0}, 1)
    with pytest.raises(
        InvalidArgumentError, match=r"params of .* have the structure .* not that of env.default_params"
    ):
        exported.reset(KEY, {"speed": 1.0})
    wrapped = interop.to_stoa(RecordEpisodeStatistics(env))
    inner = AdapterStateWithKey(base_env_state=jax.eval_shape(env.init, KEY)[0], rng_key=KEY)
    with pytest.raises(InvalidArgumentError, match=r"is wrapped \(RecordEpisodeStatistics\), and the state given"):
        jax.eval_shape(wrapped.step, inner, 1)
    with pytest.raises(PicklingUnsupportedError):
        pickle.dumps(exported)  # not made by envhub.make: build it where it is loaded
    assert exported.close() is None and not env.closed  # the env is its maker's
    assert jax.eval_shape(exported.step, jax.eval_shape(exported.reset, KEY)[0], 1)[1].step_type.dtype == jnp.int8


@pytest.mark.requires_plugin("gymnax")
def test_the_export_pickles_as_its_call():
    exported = interop.to_stoa(envhub.make("gymnax/CartPole-v1"))
    again = pickle.loads(pickle.dumps(exported))
    assert again.env is not exported.env and again.env.id == "gymnax/CartPole-v1" and again.made.flags == {}


def test_without_stoa_the_entry_point_raises_the_install_line(monkeypatch):
    monkeypatch.delitem(sys.modules, "envhub.interop.stoa_export")
    monkeypatch.setitem(sys.modules, "stoa", None)  # not installed
    with pytest.raises(MissingDependencyError, match=r"to_stoa needs the Python package 'stoa-env'.*envhub\[stoa\]"):
        interop.to_stoa(Reach())
