"""envhub-craftax: the conformance kit, a traced smoke test on every id, ground truth against craftax.

Craftax's programs are large (its world generation and step compile in tens of seconds each on a
2-CPU machine), so the whole kit runs on Craftax-Classic-Symbolic-v1 only; every other id gets a
smoke test that traces init and step of a batch (no compile) and checks spaces, structure and dtypes.
See the README's "Tests" for the measured times.
"""

from __future__ import annotations

import dataclasses
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from craftax.craftax_env import make_craftax_env_from_name
from envhub_craftax.environment import CPU_RESET_CHUNK

import envhub
from envhub import testing
from envhub.plugin import EnvUnavailableError, spaces

CLASSIC = "Craftax-Classic-Symbolic-v1"
ALL = envhub.list_envs("craftax")
AVAILABLE = [s.id for s in ALL if s.available]


def test_every_craftax_env_is_listed_and_auto_reset_names_point_to_them():
    assert sorted(AVAILABLE) == sorted(
        f"craftax/{n}" for n in ("Craftax-Symbolic-v1", "Craftax-Pixels-v1", CLASSIC, "Craftax-Classic-Pixels-v1")
    )
    assert sorted(s.name for s in ALL if not s.available) == sorted(
        i.split("/")[1].replace("-v1", "-AutoReset-v1") for i in AVAILABLE
    )
    make_craftax_env_from_name(CLASSIC.replace("-v1", "-AutoReset-v1"), auto_reset=True)  # a name craftax knows
    with pytest.raises(EnvUnavailableError, match=r"auto-resets every environment .* use 'craftax/Craftax-Pixels-v1'"):
        envhub.make("craftax/Craftax-Pixels-AutoReset-v1")


class TestKitClassicSymbolic(testing.ConformanceTests):
    env_id = f"craftax/{CLASSIC}"


@pytest.mark.parametrize("env_id", [i for i in AVAILABLE if not i.endswith(CLASSIC)])
def test_smoke_every_env_traces_inside_its_spaces(env_id):
    """Shapes, dtypes and structure of init and step of a batch of 2 against the spaces, traced only."""
    if env_id == "craftax/Craftax-Pixels-v1" and os.environ.get("ENVHUB_CRAFTAX_ALL") != "1":
        pytest.skip("tracing Craftax-Pixels' renderer takes 2-6 min on this machine: set ENVHUB_CRAFTAX_ALL=1")
    for num_envs in (2,):
        env = envhub.make(env_id, num_envs=num_envs)
        key = jax.random.key(0)
        state, first = jax.eval_shape(env.init, key)
        action = jax.eval_shape(env.action_space.sample, key)
        new_state, ts = jax.eval_shape(env.step, key, state, action)
        assert jax.tree.structure((state, first)) == jax.tree.structure((new_state, ts))
        for a, b in zip(jax.tree.leaves((state, first)), jax.tree.leaves((new_state, ts))):
            assert (a.shape, a.dtype) == (b.shape, b.dtype)
        space = env.observation_space
        for obs in (first.obs, ts.obs, ts.final_obs):
            assert (obs.shape, obs.dtype) == (space.shape, space.dtype)
        batch = () if num_envs is None else (num_envs,)
        assert (ts.reward.shape, ts.reward.dtype, ts.terminated.dtype) == (batch, jnp.float32, jnp.bool_)
        assert env.single_action_space == spaces.Discrete(17 if "Classic" in env_id else 43)


# --- ground truth: envhub and craftax side by side ----------------------------------------------------


@pytest.fixture(scope="module")
def classic():
    """envhub's Classic-Symbolic with a short time limit, and craftax's own env with the same params."""
    env = envhub.make(f"craftax/{CLASSIC}", max_episode_steps=4)
    raw = make_craftax_env_from_name(CLASSIC, auto_reset=False)
    raw_auto = make_craftax_env_from_name(CLASSIC, auto_reset=True)
    params = env.unwrapped.params
    step = jax.jit(raw.step_env)
    reset = jax.jit(raw.reset_env)
    auto_step = jax.jit(raw_auto.step)
    return env, params, step, reset, auto_step


def test_time_limit_is_truncation_with_craftax_observations(classic):
    env, params, raw_step, raw_reset, raw_auto_step = classic
    assert int(params.max_timesteps) == 4
    state, _ = env.init(jax.random.key(0))
    actions = jax.random.randint(jax.random.key(1), (9,), 0, 17)
    for t, action in enumerate(actions):
        key = jax.random.fold_in(jax.random.key(2), t)
        new_state, ts = env.step(key, state, action)
        step_key, reset_key = jax.random.split(key)
        obs, raw_state, reward, done, info = raw_step(step_key, state.env, action, params)
        np.testing.assert_allclose(ts.final_obs, obs, atol=1e-6)  # two programs: equal up to rounding
        assert float(ts.reward) == pytest.approx(float(reward)) and bool(ts.done) == bool(done)
        assert not bool(ts.terminated) and bool(ts.truncated) == (t % 4 == 3)  # steps 4 and 8
        auto_obs, _, auto_reward, auto_done, _ = raw_auto_step(key, state.env, action, params)  # craftax's auto-reset
        np.testing.assert_allclose(ts.obs, auto_obs, atol=1e-6)
        for name, value in info.items():  # the achievements craftax logs at an episode end
            if name != "discount":
                np.testing.assert_array_equal(ts.info[name], value)
        if bool(done):
            np.testing.assert_allclose(ts.obs, raw_reset(reset_key, params)[0], atol=1e-6)
            assert float(ts.info["discount"]) == 1.0 and float(info["discount"]) == 0.0  # craftax: 0 at its limit
        state = new_state


def _dying(state):
    """The same state with no health left: the next step ends the episode (craftax's is_dead)."""
    return dataclasses.replace(state, env=state.env.replace(player_health=jnp.zeros_like(state.env.player_health)))


@pytest.mark.parametrize("steps_before", [0, 3], ids=["mid-episode", "on-the-limit-step"])
def test_death_is_termination_and_wins_over_the_time_limit(classic, steps_before):
    env, params, raw_step, raw_reset, raw_auto_step = classic
    state, _ = env.init(jax.random.key(3))
    for t in range(steps_before):
        state, _ = env.step(jax.random.key(10 + t), state, jnp.int32(0))
    state = _dying(state)
    key = jax.random.key(4)
    _, ts = env.step(key, state, jnp.int32(0))
    step_key, reset_key = jax.random.split(key)
    obs, _, reward, done, _ = raw_step(step_key, state.env, jnp.int32(0), params)
    assert bool(done) and bool(ts.terminated) and not bool(ts.truncated)
    assert float(ts.info["discount"]) == 0.0 and float(ts.reward) == pytest.approx(float(reward))
    np.testing.assert_allclose(ts.final_obs, obs, atol=1e-6)
    np.testing.assert_allclose(ts.obs, raw_reset(reset_key, params)[0], atol=1e-6)


def test_params_and_kwargs_reach_craftax():
    env = envhub.make(f"craftax/{CLASSIC}", max_timesteps=50, day_length=100)
    assert (env.unwrapped.params.max_timesteps, env.unwrapped.params.day_length) == (50, 100)
    assert env.metadata["time_limit"] == 50
    custom = make_craftax_env_from_name(CLASSIC, auto_reset=False).default_params.replace(day_length=7)
    assert envhub.make(f"craftax/{CLASSIC}", params=custom).unwrapped.params.day_length == 7
    with pytest.raises(envhub.EnvKwargsError, match="pass only max_episode_steps"):
        envhub.make(f"craftax/{CLASSIC}", max_episode_steps=5, max_timesteps=5)
    with pytest.raises(envhub.EnvKwargsError, match=r"unknown keyword argument gravity=1.0; .* day_length: int"):
        envhub.make(f"craftax/{CLASSIC}", gravity=1.0)


def test_params_are_data_per_env_and_checked():
    """craftax's EnvParams are env.default_params; per-env values trace into the state (traced only: the
    kit's params check runs them); bad values get envhub's error."""
    env = envhub.make(f"craftax/{CLASSIC}", num_envs=2, day_length=100)
    default = env.default_params
    assert default.day_length == 100
    params = default.replace(day_length=jnp.array([50, 200]), spawn_cow_chance=0.5)
    state, _ = jax.eval_shape(lambda k: env.init(k, params=params), jax.random.key(0))
    assert state.params.day_length.shape == (2,) and state.params.spawn_cow_chance.dtype == jnp.float32
    with pytest.raises(
        envhub.errors.InvalidArgumentError, match=r"params.spawn_cow_chance .* must be from 0.0 to 1.0"
    ):
        env.init(jax.random.key(0), params=default.replace(spawn_cow_chance=1.5))
    with pytest.raises(envhub.errors.InvalidArgumentError, match=r"params.day_length .* shape \(3,\)"):
        env.init(jax.random.key(0), params=default.replace(day_length=jnp.array([1, 2, 3])))


def test_batched_resets_generate_worlds_in_chunks_on_cpu():
    auto = envhub.make(f"craftax/{CLASSIC}", num_envs=4)
    expected = CPU_RESET_CHUNK if jax.default_backend() == "cpu" else None
    assert auto.unwrapped.reset_chunk == expected and auto.metadata["reset_chunk"] == expected
    assert envhub.make(f"craftax/{CLASSIC}", num_envs=4, reset_chunk=None).unwrapped.reset_chunk is None
    assert envhub.make(f"craftax/{CLASSIC}", num_envs=4, reset_chunk=2).unwrapped.reset_chunk == 2
    with pytest.raises(envhub.EnvKwargsError, match=r"reset_chunk='big'.*int \| None \| 'auto'"):
        envhub.make(f"craftax/{CLASSIC}", reset_chunk="big")
