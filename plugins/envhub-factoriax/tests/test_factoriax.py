"""envhub-factoriax: the conformance kit on a representative scenario, and ground truth against factoriax
itself on every scenario (the same keys and actions give factoriax's values).

factoriax's step compiles in 3-4 s per program with the suite's cheap XLA flags (20-40 s with XLA's usual
ones), so the kit runs on MinerBootstrap-v1 (KIT_SCENARIO); ENVHUB_FULL_KIT=1 runs it on every scenario.
"""

from __future__ import annotations

import dataclasses
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from envhub_factoriax import SCENARIOS
from envhub_factoriax.environment import NO_LIMIT
from factoriax.engine.envs.miner_curriculum import BootstrapStart, apply_start
from factoriax.engine.envs.registry import list_scenarios
from factoriax.engine.envs.registry import make as factoriax_make
from factoriax.engine.observations import rgb

import envhub
from envhub import testing
from envhub.plugin import ActionError, EnvKwargsError, InvalidArgumentError, spaces

IDS = [f"factoriax/{name}" for name, _ in list_scenarios()]


def test_every_scenario_is_listed():
    assert list(SCENARIOS) == [name for name, _ in list_scenarios()]  # the plugin's copy of factoriax's list
    assert [s.id for s in envhub.list_envs("factoriax")] == sorted(IDS, key=str.lower)
    assert all(s.available for s in envhub.list_envs("factoriax"))


# --- the conformance kit ----------------------------------------------------------------------------

# MinerBootstrap-v1: the smallest program, a world drawn from the key and an end of its own besides the
# clock. EasyRocket-v1 (the same world, another reward) and Rocket-v1 (a fixed 32x32 level, the action
# mask) get the ground truth below; the suite's time budget leaves room for one kit class.
KIT_SCENARIO = "factoriax/MinerBootstrap-v1"
FULL_KIT = os.environ.get("ENVHUB_FULL_KIT") == "1"

for _env_id in IDS if FULL_KIT else [KIT_SCENARIO]:
    _name = "TestKit_" + "".join(c if c.isalnum() else "_" for c in _env_id.split("/", 1)[1])
    globals()[_name] = type(_name, (testing.ConformanceTests,), {"env_id": _env_id, "__module__": __name__})


# --- ground truth: envhub and factoriax side by side --------------------------------------------------

NUM_ENVS, NUM_STEPS, LIMIT = 2, 7, 3
# MinerBootstrap-v1 ends on its own when six miners produce, which random actions never reach. Before the
# steps FINISH_AT (the third and the seventh) its state becomes that end's start, by factoriax's own
# apply_start with six miners placed and producing: the third step ends by the scenario and the clock at
# once (terminated wins), the sixth by the clock, the seventh by the scenario alone.
FINISH_AT = {"factoriax/MinerBootstrap-v1": (2, 6)}
SIX_PRODUCING = BootstrapStart(n_placed=6, n_miners=0, n_materials=0)


@pytest.mark.parametrize("env_id", IDS)
def test_steps_are_factoriax_steps(env_id):
    """In one compiled program per id: envhub's rollout of 2 envs with random actions and a time limit of 3,
    and factoriax's own ``step_env`` of envhub's state before each step (same action, the per-env key
    envhub's base gives it) and its ``reset_env`` with envhub's reset keys (reset_spares=False).
    Observations, final observations, rewards, the flags and every next state are factoriax's;
    observations lie in the space."""
    env = envhub.make(env_id, num_envs=NUM_ENVS, max_episode_steps=LIMIT, reset_spares=False)
    fx_env, params = factoriax_make(env_id.split("/")[1], auto_reset=False)
    params = params.replace(max_timesteps=LIMIT)  # factoriax's own scenario at the same step budget
    space = env.observation_space
    finish = np.isin(np.arange(NUM_STEPS), FINISH_AT.get(env_id, ()))

    def body(state, xs):
        k, finish_now = xs
        crafted = state.env
        if finish.any():
            finished = jax.vmap(lambda s: apply_start(k, s, params, SIX_PRODUCING))(state.env)
            crafted = jax.tree.map(lambda f, s: jnp.where(finish_now, f, s), finished, state.env)
        action = env.action_space.sample(jax.random.fold_in(k, 1))
        new, ts = env.step(k, dataclasses.replace(state, env=crafted), action)
        return new, (state.env, crafted, k, action, ts, space.contains(ts.obs) & space.contains(ts.final_obs))

    def env_keys(keys, which):
        """The keys envhub's base steps (0) or resets (1) each env with: split(key), then split over the batch."""
        return jax.vmap(lambda k: jax.random.split(jax.random.split(k)[which], NUM_ENVS))(keys)

    @jax.jit
    def run(key):
        state, first = env.init(key)
        keys = jax.random.split(jax.random.fold_in(key, 1), NUM_STEPS)
        last, (given, before, keys, actions, ts, inside) = jax.lax.scan(body, state, (keys, finish))
        reached = _each(lambda k, s, a: fx_env.step_env(k, s, a, params), env_keys(keys, 0), before, actions)
        restarted = _each(lambda k: fx_env.reset_env(k, params), env_keys(keys, 1))
        # The state each step left (what the next step was given, before any finishing).
        after = jax.tree.map(lambda b, x: jnp.concatenate([b[1:], x[None]]), given, last.env)
        return first, ts, inside.all() & space.contains(first.obs), reached, restarted, after

    first, ts, inside, reached, restarted, after = jax.device_get(run(jax.random.key(0)))
    obs, reached, reward, done, _ = reached
    assert bool(inside), f"{env_id}: an observation outside {space}"
    assert jax.tree.structure(first) == jax.tree.structure(ts)
    assert ts.reward.dtype == np.float32 and ts.reward.shape == (NUM_STEPS, NUM_ENVS)
    np.testing.assert_array_equal(ts.final_obs, obs)
    np.testing.assert_array_equal(ts.reward, reward)
    np.testing.assert_array_equal(ts.done, done)
    # The scenario's end where six miners produce (random actions never get there), else the clock's.
    timeout = reached.timestep >= LIMIT
    np.testing.assert_array_equal(ts.terminated, np.broadcast_to(finish[:, None], done.shape))
    np.testing.assert_array_equal(ts.truncated, timeout & ~ts.terminated)
    np.testing.assert_array_equal(done, timeout | ts.terminated)
    np.testing.assert_array_equal(timeout.any(axis=1), [False, False, True, False, False, True, False])
    if finish.any():
        np.testing.assert_array_equal(ts.reward[finish], 1.0)  # completion pays 1
        assert (timeout & ts.terminated).any(), "no step ended by the scenario and the clock at once"
    # Where an episode went on, the observation and the next state are the ones reached; where it ended,
    # factoriax's reset with envhub's reset key.
    for x, r, s in zip(jax.tree.leaves((ts.obs, after)), jax.tree.leaves((obs, reached)), jax.tree.leaves(restarted)):
        np.testing.assert_array_equal(x, np.where(done.reshape(done.shape + (1,) * (x.ndim - 2)), s, r))


def _each(fn, *args):
    """``fn`` of every (step, env) entry of ``args``, in sequence (``lax.map``): factoriax's function traced
    once, unbatched (``vmap(vmap(fn))`` traces 3x slower: its ops' batching rules dominate)."""
    flat = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), args)
    out = jax.lax.map(lambda one: fn(*one), flat)
    return jax.tree.map(lambda x: x.reshape((NUM_STEPS, NUM_ENVS, *x.shape[1:])), out)


# --- errors, spaces, kwargs, rendering ----------------------------------------------------------------


@pytest.fixture(scope="module")
def easy_rocket():
    """Two EasyRocket-v1 envs and their first state (one init program for the tests that need a state)."""
    env = envhub.make("factoriax/EasyRocket-v1", num_envs=2)
    return env, env.init(jax.random.key(0))[0]


def test_action_outside_the_space_is_an_envhub_error(easy_rocket):
    env, state = easy_rocket
    with pytest.raises(ActionError, match=r"'factoriax/EasyRocket-v1': 87 at index \(1,\) is outside \[0, 87\)"):
        env.step(jax.random.key(1), state, jnp.array([0, 87], jnp.int32))


def test_spaces_and_kwargs_reach_the_scenario():
    """The builder's observation variant and radius, EnvParams fields and the time limit (also by
    factoriax's name) reach factoriax; what the id fixes, or envhub replaces, is refused."""
    env = envhub.make("factoriax/MinerBootstrap-v1", num_envs=2)
    assert env.single_action_space == spaces.Discrete(87, dtype=np.int32)
    # superficial_local, radius 7: 3 channels x 15 x 15 tiles + 72 player scalars
    assert env.single_observation_space == spaces.Box(0.0, 1.0, (3 * 15 * 15 + 72,), np.float32)
    assert env.metadata["time_limit"] == 300 and env.metadata["observation"] == "superficial_local"
    small = envhub.make("factoriax/MinerBootstrap-v1", obs_radius=3, miner_mining_rate=5, max_timesteps=50)
    assert small.observation_space.shape == (3 * 7 * 7 + 72,)
    assert small.unwrapped.params.miner_mining_rate == 5 and small.unwrapped.params.max_timesteps == 50
    xray = envhub.make("factoriax/EasyRocket-v1", obs="x_ray_global", max_episode_steps=None)
    assert xray.observation_space.shape == (10 * 16 * 16 + 81,)  # the whole 16x16 map, x_ray's 10 channels
    assert xray.unwrapped.params.max_timesteps == NO_LIMIT and xray.metadata["time_limit"] is None
    start = BootstrapStart.place(2)
    hooks = envhub.make("factoriax/MinerBootstrap-v1", start=start).unwrapped.factoriax_env._reset_hooks
    assert [hook.keywords for hook in hooks] == [{"start": start}]  # factoriax's apply_start, bound to it
    with pytest.raises(EnvKwargsError, match=r"unknown keyword argument start=.*Rocket-v1 accepts"):
        envhub.make("factoriax/Rocket-v1", start=start)
    with pytest.raises(EnvKwargsError, match=r"unknown keyword argument base_resources=5"):
        envhub.make("factoriax/Rocket-v1", base_resources=5)  # its level brings its own ore
    with pytest.raises(EnvKwargsError, match=r"obs='rgb' \(str\) is not 'x_ray_global' \|"):
        envhub.make("factoriax/Rocket-v1", obs="rgb")
    with pytest.raises(EnvKwargsError, match=r"auto_reset=False is refused: envhub resets in the same step"):
        envhub.make("factoriax/EasyRocket-v1", auto_reset=False)
    with pytest.raises(EnvKwargsError, match=r"resample=False is refused: envhub's reset_mode='cached'"):
        envhub.make("factoriax/EasyRocket-v1", resample=False)
    with pytest.raises(InvalidArgumentError, match=r"max_episode_steps=0: use None \(no limit\) or an int >= 1"):
        envhub.make("factoriax/EasyRocket-v1", max_timesteps=0)


def test_render_draws_factoriax_pixels(easy_rocket):
    env, state = easy_rocket
    frames = env.render(state)
    assert frames.shape == (2, 128, 128, 3) and frames.dtype == np.uint8  # 16x16 tiles of 8 px
    second = jax.tree.map(lambda x: x[1], jax.device_get(state.env))
    np.testing.assert_array_equal(env.render(state, index=1), rgb(second, block_pixel_size=8))  # factoriax's drawing
    assert not np.array_equal(frames[0], frames[1])  # two worlds from two keys


def test_params_are_data_per_env_and_checked():
    """The scenario's EnvParams are env.default_params; per-env values trace into the state (traced only: the
    kit's params check runs them); bad values get envhub's error."""
    env = envhub.make(KIT_SCENARIO, num_envs=2)
    default = env.default_params
    params = default.replace(miner_mining_rate=jnp.array([1, 2], dtype=jnp.asarray(default.miner_mining_rate).dtype))
    state, _ = jax.eval_shape(lambda k: env.init(k, params=params), jax.random.key(0))
    assert state.params.miner_mining_rate.shape == (2,) and state.next_params.max_timesteps.shape == (2,)
    with pytest.raises(InvalidArgumentError, match=r"params.miner_mining_rate .* must be >= 0"):
        env.init(jax.random.key(0), params=default.replace(miner_mining_rate=-1))
    with pytest.raises(InvalidArgumentError, match=r"params of 'factoriax/MinerBootstrap-v1' have the structure"):
        env.init(jax.random.key(0), params={"miner_mining_rate": 1})
