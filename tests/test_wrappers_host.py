"""Wrappers on a host (gymnasium) environment: same behaviour, no per-step reset of the host."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub import testing
from envhub.wrappers import (
    ClipReward,
    FrameStack,
    NormalizeObservation,
    RecordEpisodeStatistics,
    StickyAction,
    TimeLimit,
    TransformAction,
    TransformObservation,
    TransformReward,
)


def cartpole(num_envs=2, **kwargs):
    return envhub.make("gymnasium/CartPole-v1", num_envs=num_envs, **kwargs)


def test_partial_reset_resets_only_the_masked_sub_envs():
    env = cartpole(3)
    state, _ = env.init(jax.random.key(0))
    state, stepped = env.step(jax.random.key(1), state, jnp.array([0, 1, 0]))
    state, reset = jax.jit(lambda s: env.reset(jax.random.key(2), s, where=jnp.array([True, False, True])))(state)
    np.testing.assert_array_equal(reset.obs[1], stepped.obs[1])  # untouched
    assert not np.allclose(reset.obs[0], stepped.obs[0]) and np.all(
        np.abs(np.asarray(reset.obs)[[0, 2]]) <= 0.05
    )  # fresh starts
    env.step(jax.random.key(3), state, jnp.array([0, 1, 0]))  # the state stays the newest


def test_time_limit_on_a_host_env_counts_per_episode():
    env = TimeLimit(cartpole(2), 6)
    state, _ = env.init(jax.random.key(0))

    def body(state, key):
        state, ts = env.step(key, state, jnp.array([0, 1], jnp.int32))
        return state, (ts.terminated, ts.truncated, ts.final_obs, ts.obs)

    _, (term, trunc, final_obs, obs) = jax.jit(
        lambda s: jax.lax.scan(body, s, jax.random.split(jax.random.key(1), 13))
    )(state)
    assert np.flatnonzero(trunc[:, 0]).tolist() == [5, 11] and not term.any()
    assert not np.allclose(final_obs[5], obs[5])
    env.close()
    assert env.unwrapped.live_host_envs() == 0


@pytest.mark.parametrize(
    "wrap,options",
    [
        (lambda e: TimeLimit(e, 5), testing.Options(num_steps=40)),
        (
            lambda e: RecordEpisodeStatistics(ClipReward(e, 0.0, 0.5)),
            testing.Options(time_limit_kwarg="max_episode_steps", time_limit=5),
        ),
        (lambda e: FrameStack(e, 3), testing.Options(time_limit_kwarg="max_episode_steps", time_limit=5)),
        (
            lambda e: StickyAction(NormalizeObservation(e), 0.3),
            testing.Options(time_limit_kwarg="max_episode_steps", time_limit=5),
        ),
        (
            lambda e: TransformReward(TransformObservation(TransformAction(e, lambda a: 1 - a), jnp.tanh), jnp.sign),
            testing.Options(time_limit_kwarg="max_episode_steps", time_limit=5),
        ),
    ],
)
def test_the_kit_passes_on_wrapped_host_envs(wrap, options):
    results = testing.run_checks(lambda **kw: wrap(cartpole(2, **kw)), options)
    assert not any(r.failed for r in results), testing.format_report(results)


def test_record_episode_statistics_on_a_host_env():
    env = RecordEpisodeStatistics(cartpole(2, max_episode_steps=4))
    state, first = env.init(jax.random.key(0))
    lengths = []
    for i in range(8):
        state, ts = env.step(jax.random.key(i), state, jnp.array([0, 1]))
        lengths.append(np.asarray(ts.info["episode_length"]).tolist())
    assert [row[1] for row in lengths] == [1, 2, 3, 4, 1, 2, 3, 4]


def test_transform_wrappers_on_a_host_env():
    plain = cartpole(2)
    env = TransformReward(TransformObservation(TransformAction(cartpole(2), lambda a: 1 - a), jnp.abs), jnp.negative)
    key, actions = jax.random.key(0), jnp.array([[0, 1], [1, 1], [0, 0]], jnp.int32)
    (plain_state, first), (state, wrapped_first) = plain.init(key), env.init(key)
    np.testing.assert_array_equal(wrapped_first.obs, np.abs(first.obs))
    for i, action in enumerate(actions):  # the wrapped env is given the flipped actions
        plain_state, expected = plain.step(jax.random.key(i), plain_state, action)
        state, ts = jax.jit(env.step)(jax.random.key(i), state, 1 - action)
        np.testing.assert_array_equal(ts.obs, np.abs(expected.obs))
        np.testing.assert_array_equal(ts.reward, -expected.reward)
    assert env.observation_space.shape == (2, 4)
