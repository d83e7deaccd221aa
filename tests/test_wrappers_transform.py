"""TransformObservation / TransformReward / TransformAction, the one stateful base, and WrapperState's names."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_wrappers import corridor, run

import envhub
from envhub import spaces, wrappers
from envhub.errors import InvalidArgumentError
from envhub.wrappers import (
    DropFinalObs,
    NormalizeObservation,
    NormalizeReward,
    StatefulWrapper,
    TransformAction,
    TransformObservation,
    TransformReward,
    WrapperState,
)

KEY = jax.random.key(0)


def test_transform_observation_maps_obs_and_final_obs():
    inner = corridor(length=3)
    env = TransformObservation(inner, lambda obs: obs * 2 + 1)
    assert env.observation_space == spaces.Box(-np.inf, np.inf, (2,))  # derived with jax.eval_shape
    first, ts = run(env, jnp.ones(4, jnp.int32))
    inner_first, inner_ts = run(inner, jnp.ones(4, jnp.int32))
    np.testing.assert_array_equal(first.obs, inner_first.obs * 2 + 1)
    np.testing.assert_array_equal(ts.obs, inner_ts.obs * 2 + 1)
    np.testing.assert_array_equal(ts.final_obs, inner_ts.final_obs * 2 + 1)
    assert bool(ts.terminated[2]) and ts.final_obs[2, 0] == 7.0 and ts.obs[2, 0] == 1.0  # reached 3, restarted at 0


def test_transform_observation_is_per_env_on_a_batch_and_derives_a_tree_space():
    env = TransformObservation(corridor(num_envs=3), lambda obs: {"pos": obs[0], "far": obs[0] > 1})
    assert env.single_observation_space == spaces.Tree(
        {"pos": spaces.Box(-np.inf, np.inf, ()), "far": spaces.Box(False, True, (), bool)}
    )
    assert env.observation_space.shape == {"pos": (3,), "far": (3,)}
    _, ts = run(env, jnp.ones((4, 3), jnp.int32))
    assert ts.obs["pos"].shape == (4, 3) and ts.obs["far"].dtype == jnp.bool_
    np.testing.assert_array_equal(ts.obs["far"], ts.obs["pos"] > 1)
    assert bool(jax.vmap(env.observation_space.contains)(ts.obs).all())


def test_transform_observation_with_a_given_space_under_vmap():
    space = spaces.Box(0.0, 1.0, ())
    env = TransformObservation(corridor(length=4), lambda obs: obs[0] / 4, observation_space=space)
    assert env.observation_space == space and env.single_observation_space == space
    states, ts = jax.vmap(env.init)(jax.random.split(KEY, 5))
    _, ts = jax.jit(jax.vmap(env.step))(jax.random.split(KEY, 5), states, jnp.ones(5, jnp.int32))
    assert ts.obs.shape == (5,) and np.all((ts.obs >= 0.25) & (ts.obs <= 1.0))
    np.testing.assert_array_equal(ts.obs * 4 % 1, 0)  # the cells, a quarter each


def test_transform_observation_keeps_a_dropped_final_obs():
    _, ts = run(TransformObservation(DropFinalObs(corridor()), lambda obs: -obs), jnp.ones(3, jnp.int32))
    assert ts.final_obs is None and np.all(ts.obs[:, 0] <= 0)


def test_transform_observation_errors():
    with pytest.raises(
        InvalidArgumentError, match=r"returns .*\[2\].* which does not fit Box\(low=0.0, high=1.0, shape=\(\)"
    ):
        TransformObservation(corridor(), lambda obs: obs, observation_space=spaces.Box(0.0, 1.0, ()))
    with pytest.raises(
        InvalidArgumentError, match=r"could not trace fn=.* on one observation .*pass a jittable function"
    ):
        TransformObservation(corridor(), lambda obs: float(obs[0]))


def test_transform_reward_batched_and_unbatched():
    inner = corridor(length=2)
    _, expected = run(inner, jnp.ones(4, jnp.int32))
    _, ts = run(TransformReward(inner, lambda r: 10 * r - 1), jnp.ones(4, jnp.int32))
    np.testing.assert_array_equal(ts.reward, 10 * expected.reward - 1)
    assert np.asarray(ts.reward).tolist() == [-1, 9, -1, 9] and ts.reward.dtype == jnp.float32
    _, ts = run(TransformReward(corridor(num_envs=2, length=2), lambda r: r > 0), jnp.ones((4, 2), jnp.int32))
    assert ts.reward.dtype == jnp.float32 and np.asarray(ts.reward[:, 0]).tolist() == [0, 1, 0, 1]
    with pytest.raises(InvalidArgumentError, match=r"TransformReward's fn=.* returns float32\[2\]"):
        TransformReward(inner, lambda r: jnp.stack([r, r]))


def test_clip_reward_is_a_transform_reward():
    env = wrappers.ClipReward(corridor(length=2), 0.0, 0.5)
    _, ts = run(env, jnp.ones(4, jnp.int32))
    assert isinstance(env, TransformReward) and np.asarray(ts.reward).tolist() == [0, 0.5, 0, 0.5]


def test_transform_action_maps_the_agents_action():
    flipped = TransformAction(corridor(length=3), lambda a: 1 - a)  # 0 now means right
    assert flipped.action_space == spaces.Discrete(2)
    _, ts = run(flipped, jnp.zeros(3, jnp.int32))
    assert np.flatnonzero(ts.terminated).tolist() == [2]
    pair = spaces.Box(-1.0, 1.0, (2,))  # one env's action: (left score, right score)
    env = TransformAction(corridor(num_envs=2, length=3), lambda a: (a[1] > a[0]).astype(jnp.int32), pair)
    assert env.single_action_space == pair and env.action_space == pair.batch(2)
    actions = jnp.broadcast_to(jnp.array([[0.0, 1.0], [1.0, 0.0]]), (3, 2, 2))  # env 0 right, env 1 left
    _, ts = run(env, actions)
    assert np.flatnonzero(ts.terminated[:, 0]).tolist() == [2] and not ts.terminated[:, 1].any()


def test_transform_action_errors():
    with pytest.raises(InvalidArgumentError, match=r"returns int32\[2\], which does not fit Discrete\(2"):
        TransformAction(corridor(), lambda a: jnp.stack([a, a]))
    with pytest.raises(InvalidArgumentError, match="ClipAction needs a Box action space"):
        wrappers.ClipAction(corridor())


def test_normalize_observation_statistics_outlive_resets():
    env = NormalizeObservation(corridor(num_envs=2))
    state, _ = env.init(KEY)
    state, _ = env.step(KEY, state, jnp.ones(2, jnp.int32))
    partial, _ = env.reset(KEY, state, where=jnp.array([True, False]))
    full, _ = env.reset(KEY, state)
    assert float(state.wrapper_state["count"]) == pytest.approx(4.0)  # init's and one step's obs
    assert float(partial.wrapper_state["count"]) == pytest.approx(4.0)  # kept
    assert float(full.wrapper_state["count"]) == pytest.approx(6.0)  # kept, plus the reset's obs


def test_normalize_reward_restarts_only_the_return():
    env = NormalizeReward(corridor(num_envs=2, length=1))
    state, _ = env.init(KEY)
    state, _ = env.step(KEY, state, jnp.zeros(2, jnp.int32))  # both stay in the corridor (no reward)
    state, _ = env.step(KEY, state, jnp.array([1, 0], jnp.int32))  # env 0 reaches the end
    state = WrapperState(state.env_state, {**state.wrapper_state, "return": jnp.array([2.0, 3.0])})
    reset, _ = env.reset(KEY, state, where=jnp.array([True, False]))
    assert np.asarray(reset.wrapper_state["return"]).tolist() == [0.0, 3.0]
    assert float(reset.wrapper_state["var"]) == float(state.wrapper_state["var"]) != 1.0


def test_every_wrapper_with_state_of_its_own_has_the_one_base():
    stateful = {n for n in wrappers.__all__ if getattr(getattr(wrappers, n), "wraps_state", False)} - {
        "StatefulWrapper"
    }
    assert len(stateful) == 7 and all(issubclass(getattr(wrappers, n), StatefulWrapper) for n in stateful), stateful


def test_every_wrappers_module_says_what_it_exports():
    names = [m.name for m in pkgutil.iter_modules(wrappers.__path__)]
    for name in [*(f"envhub.wrappers.{n}" for n in names), "envhub.wrappers.sharding"]:
        module = importlib.import_module(name)
        assert all(hasattr(module, n) for n in module.__all__), name
    assert (
        envhub.wrappers.sharding.ShardedEnvironment
        is wrappers.ShardedEnvironment
        is wrappers.sharded.ShardedEnvironment
    )


def test_wrapper_state_names():
    state = WrapperState(env_state={"pos": 1}, wrapper_state=2)
    assert jax.tree.leaves(state) == [1, 2]
    assert jax.tree.map(lambda x: x * 10, state) == WrapperState({"pos": 10}, 20)
    assert dataclasses.replace(state, wrapper_state=3).wrapper_state == 3
