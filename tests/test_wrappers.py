"""Each wrapper's behaviour at episode boundaries, its structure, and the kit on wrapped envs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub import spaces, testing, wrappers
from envhub.core.types import TimeStep
from envhub.testing.toy_envs import Corridor
from envhub.wrappers import (
    ActionRepeat,
    ClipReward,
    Discretize,
    EpisodicLife,
    FlattenObservation,
    FrameStack,
    IgnoreTruncation,
    NormalizeObservation,
    NormalizeReward,
    RecordEpisodeStatistics,
    StickyAction,
    TimeLimit,
    VmapEnvironment,
)

KEY = jax.random.key(0)


def corridor(num_envs=None, **kwargs):
    """Starts in cell 0 every episode; always moving right terminates at step ``length``."""
    env = Corridor(bug="ignores_key", **kwargs)
    env.id = "toy/Corridor-v0"
    return env if num_envs is None else VmapEnvironment(env, num_envs)


def run(env, actions, key=KEY):
    """Init, then step through ``actions`` (leading axis = time) in a jitted scan; stacked TimeSteps."""

    def go(key):
        state, first = env.init(key)

        def body(state, xs):
            k, a = xs
            return env.step(k, state, a)

        _, steps = jax.lax.scan(body, state, (jax.random.split(key, len(actions)), actions))
        return first, steps

    return jax.jit(go)(key)


def alternating(n, start):
    """Right for ``start`` steps, then left/right alternately (never reaching the end)."""
    return jnp.asarray([1] * start + [i % 2 for i in range(n - start)], jnp.int32)


def test_time_limit_counter_restarts_after_a_natural_end():
    env = TimeLimit(corridor(length=5, max_steps=100), 8)
    _, ts = run(env, alternating(20, 5))
    assert np.flatnonzero(ts.terminated).tolist() == [4]  # step 5
    assert np.flatnonzero(ts.truncated).tolist() == [12]  # 8 steps into the next episode, not 3
    assert float(ts.final_obs[12][0]) != 0.0 and float(ts.obs[12][0]) == 0.0  # reached vs first obs


def test_time_limit_resets_only_the_cut_members_of_a_batch():
    env = TimeLimit(corridor(num_envs=2, length=5, max_steps=100), 3)
    actions = jnp.stack([jnp.ones(7, jnp.int32), alternating(7, 0)], axis=1)  # env 0 goes right, env 1 dithers
    _, ts = run(env, actions)
    assert np.flatnonzero(ts.truncated[:, 1]).tolist() == [2, 5]
    assert np.flatnonzero(ts.truncated[:, 0]).tolist() == [2, 5]
    # Env 0 was cut at cell 3 and restarted from 0 each time: it never reached the end.
    np.testing.assert_array_equal(ts.final_obs[2, 0], [3.0, 0.0])
    np.testing.assert_array_equal(ts.obs[2, 0], [0.0, 0.0])


def test_time_limit_passes_the_kit_on_gymnax():
    results = testing.run_checks(
        lambda **kw: TimeLimit(envhub.make("gymnax/CartPole-v1", num_envs=3), kw.get("limit", 40)),
        testing.Options(time_limit_kwarg="limit", time_limit=6),
    )
    assert not any(r.failed for r in results), testing.format_report(results)


def test_frame_stack_never_leaks_the_old_episode():
    env = FrameStack(corridor(length=3), 4)
    first, ts = run(env, jnp.ones(4, jnp.int32))
    assert env.single_observation_space.shape == (4, 2) and first.obs.shape == (4, 2)
    np.testing.assert_array_equal(first.obs[:, 0], [0, 0, 0, 0])
    np.testing.assert_array_equal(ts.obs[1][:, 0], [0, 0, 1, 2])
    assert bool(ts.terminated[2])
    np.testing.assert_array_equal(ts.final_obs[2][:, 0], [0, 1, 2, 3])  # ends with the reached frame
    np.testing.assert_array_equal(ts.obs[2][:, 0], [0, 0, 0, 0])  # only the new episode's first frame


def test_frame_stack_kit_batched():
    results = testing.run_checks(
        lambda **kw: FrameStack(envhub.make("gymnax/CartPole-v1", num_envs=2, **kw), 3),
        testing.Options(time_limit_kwarg="max_steps_in_episode", time_limit=5),
    )
    assert not any(r.failed for r in results), testing.format_report(results)


def test_clip_reward_keeps_the_unclipped_reward():
    env = ClipReward(envhub.make("gymnax/Pendulum-v1"), -0.5, 0.0)
    first, ts = run(env, jnp.zeros((5, 1)))
    assert set(first.info) == set(ts.info) and "unclipped_reward" in ts.info
    assert np.all(ts.reward >= -0.5) and np.any(ts.info["unclipped_reward"] < -0.5)
    np.testing.assert_allclose(ts.reward, np.clip(ts.info["unclipped_reward"], -0.5, 0.0))


def test_record_episode_statistics():
    env = RecordEpisodeStatistics(corridor(length=3))
    first, ts = run(env, jnp.ones(7, jnp.int32))
    assert int(first.info["episode_length"]) == 0
    assert np.asarray(ts.info["episode_length"]).tolist() == [1, 2, 3, 1, 2, 3, 1]
    assert np.asarray(ts.info["episode_return"]).tolist() == [0, 0, 1, 0, 0, 1, 0]
    assert np.asarray(ts.info["last_episode_length"]).tolist() == [0, 0, 3, 3, 3, 3, 3]
    assert np.asarray(ts.info["last_episode_return"]).tolist() == [0, 0, 1, 1, 1, 1, 1]
    assert set(first.info) == set(ts.info) and int(first.info["last_episode_length"]) == 0


def test_ignore_truncation_and_dropping_final_obs():
    env = IgnoreTruncation(envhub.make("gymnax/Pendulum-v1", max_steps_in_episode=4), drop_final_obs=True)
    first, ts = run(env, jnp.zeros((9, 1)))
    assert not ts.truncated.any() and np.flatnonzero(ts.terminated).tolist() == [3, 7]
    assert ts.final_obs is None and first.final_obs is None


def test_flatten_observation_of_a_tree():
    class TreeObs(Corridor):
        @property
        def observation_space(self):
            return spaces.Tree({"pos": spaces.Box(0.0, 6.0, (2,)), "cell": spaces.Discrete(7)})

        def _obs(self, pos, t):
            return {"pos": super()._obs(pos, t), "cell": pos.astype(jnp.int32)}

    inner = TreeObs()
    inner.id = "toy/TreeObs"
    env = FlattenObservation(VmapEnvironment(inner, 2))
    assert env.single_observation_space == spaces.Box(np.array([0, 0, 0.0]), np.array([6, 6, 6.0]))
    first, ts = run(env, jnp.ones((3, 2), jnp.int32))
    assert ts.obs.shape == (3, 2, 3) and ts.final_obs.dtype == jnp.float32
    np.testing.assert_array_equal(ts.obs[:, :, 0], ts.obs[:, :, 1])  # leaves in key order: cell, then pos


def test_sticky_action():
    always = StickyAction(corridor(length=3), prob=1.0)  # every action is replaced by the no-op (left)
    _, ts = run(always, jnp.ones(5, jnp.int32))
    assert not ts.done.any() and np.all(ts.obs[:, 0] == 0)
    never = StickyAction(corridor(length=3), prob=0.0)
    _, ts = run(never, jnp.ones(5, jnp.int32))
    assert np.flatnonzero(ts.terminated).tolist() == [2]


class Lives(envhub.Environment):
    """A clock that loses one of three lives every 2 steps; the game ends with the last life."""

    id = "toy/Lives"
    action_space = spaces.Discrete(2)
    observation_space = spaces.Box(0.0, 10.0, ())

    def _init(self, key):
        return jnp.int32(0), TimeStep.first(jnp.float32(0), {"lives": jnp.int32(3)})

    def _reset(self, key, state):
        return self._init(key)

    def _step(self, key, t, action):
        t = t + 1
        lives = 3 - t // 2
        over = lives == 0
        ts = TimeStep(
            jnp.where(over, 0.0, t).astype(jnp.float32),
            jnp.float32(0),
            over,
            jnp.bool_(False),
            t.astype(jnp.float32),
            {"lives": jnp.where(over, 3, lives)},
        )
        return jnp.where(over, 0, t), ts


def test_episodic_life():
    env = EpisodicLife(Lives())
    _, ts = run(env, jnp.zeros(8, jnp.int32))
    assert np.flatnonzero(ts.terminated).tolist() == [1, 3, 5, 7]  # lives 2, 1, game over, then 2 again
    np.testing.assert_array_equal(ts.obs[1], ts.final_obs[1])  # no reset at a lost life
    assert float(ts.obs[5]) == 0.0 and float(ts.final_obs[5]) == 6.0  # the game over does reset
    with pytest.raises(ValueError, match="EpisodicLife needs info\\['lives'\\]"):
        EpisodicLife(corridor())


def test_action_repeat_sums_rewards_and_stops_at_the_end():
    env = ActionRepeat(corridor(length=5), 2)
    _, ts = run(env, jnp.ones(4, jnp.int32))
    assert np.flatnonzero(ts.terminated).tolist() == [2]  # cells 2, 4, then 5 on the 5th sub-step
    assert np.asarray(ts.reward).tolist() == [0, 0, 1, 0]
    np.testing.assert_array_equal(ts.final_obs[2], [5.0, 0.0])
    np.testing.assert_array_equal(ts.obs[2], [0.0, 0.0])
    np.testing.assert_array_equal(ts.obs[3], [2.0, 0.0])  # the next macro step starts fresh


def test_discretize_pendulum():
    env = Discretize(envhub.make("gymnax/Pendulum-v1"), 5)
    assert env.action_space == spaces.MultiDiscrete([5])
    state, _ = env.init(KEY)
    inner = envhub.make("gymnax/Pendulum-v1")
    _, ts = env.step(KEY, state, jnp.array([4]))
    _, expected = inner.step(KEY, state, jnp.array([2.0]))
    np.testing.assert_allclose(ts.obs, expected.obs)
    with pytest.raises(envhub.errors.InvalidArgumentError, match="Discretize needs a bounded Box action space"):
        Discretize(corridor(), 3)


def test_clip_and_rescale_action_on_pendulum():
    """Pendulum's torque is a Box in [-2, 2]: ClipAction clips 5 to 2; RescaleAction maps [-1, 1] onto it."""
    inner = envhub.make("gymnax/Pendulum-v1")
    state, _ = inner.init(KEY)
    _, at_max = inner.step(KEY, state, jnp.array([2.0]))
    _, at_min = inner.step(KEY, state, jnp.array([-2.0]))
    _, at_half = inner.step(KEY, state, jnp.array([1.0]))
    clip = wrappers.ClipAction(inner)
    assert clip.action_space == spaces.Box(-np.inf, np.inf, (1,))
    np.testing.assert_allclose(jax.jit(clip.step)(KEY, state, jnp.array([5.0]))[1].obs, at_max.obs)
    rescale = wrappers.RescaleAction(inner)
    assert rescale.action_space == spaces.Box(-1.0, 1.0, (1,))
    for action, expected in [(1.0, at_max), (-1.0, at_min), (0.5, at_half)]:
        np.testing.assert_allclose(rescale.step(KEY, state, jnp.array([action]))[1].obs, expected.obs, rtol=1e-6)
    with pytest.raises(envhub.errors.InvalidArgumentError, match=r"RescaleAction needs a bounded Box action space"):
        wrappers.RescaleAction(corridor())
    with pytest.raises(envhub.errors.InvalidArgumentError, match=r"needs low < high"):
        wrappers.RescaleAction(inner, 1.0, 1.0)


def test_normalize_observation_batched():
    env = NormalizeObservation(envhub.make("gymnax/CartPole-v1", num_envs=64))
    _, ts = run(env, jnp.zeros((200, 64), jnp.int32) + jnp.arange(200)[:, None] % 2)
    obs = np.asarray(ts.obs[100:]).reshape(-1, 4)
    assert np.all(np.abs(obs.mean(0)) < 0.5) and np.all(np.abs(obs.std(0) - 1) < 0.5)
    state, _ = env.init(KEY)
    assert state.wrapper_state["mean"].shape == (4,)  # shared by the batch


def test_normalize_reward_keeps_the_original():
    env = NormalizeReward(envhub.make("gymnax/CartPole-v1", num_envs=8))
    _, ts = run(env, jnp.ones((30, 8), jnp.int32))
    np.testing.assert_array_equal(ts.info["unnormalized_reward"], 1.0)
    assert not np.allclose(ts.reward, 1.0)


def test_get_wrapper_and_unwrapped():
    base = corridor()
    env = ClipReward(TimeLimit(base, 5))
    assert env.has_wrapper(TimeLimit) and not env.has_wrapper(FrameStack)
    assert env.get_wrapper(TimeLimit).max_steps == 5 and env.unwrapped is base


@pytest.mark.parametrize(
    "wrap",
    [
        lambda e: TimeLimit(e, 4),
        lambda e: RecordEpisodeStatistics(e),
        lambda e: FrameStack(e, 2),
        lambda e: StickyAction(e, 0.5),
        lambda e: NormalizeReward(NormalizeObservation(e)),
        lambda e: ActionRepeat(e, 3),
        lambda e: ClipReward(FlattenObservation(e)),
    ],
)
def test_structure_is_identical_from_init_reset_and_step(wrap):
    env = wrap(corridor(num_envs=3))
    state, ts = env.init(KEY)
    stepped = env.step(KEY, state, jnp.ones(3, jnp.int32))
    reset = env.reset(KEY, stepped[0])
    partial = env.reset(KEY, stepped[0], where=jnp.array([True, False, True]))
    for other in (stepped, reset, partial):
        assert jax.tree.structure(other) == jax.tree.structure((state, ts))
        avals = [(x.shape, x.dtype) for x in jax.tree.leaves(other)]
        assert avals == [(x.shape, x.dtype) for x in jax.tree.leaves((state, ts))]


def test_action_repeat_refuses_host_envs():
    class FakeHost(Corridor):
        is_jax_native = False

    with pytest.raises(envhub.errors.InvalidArgumentError, match="needs a JAX-native environment.*frame skip"):
        ActionRepeat(FakeHost(), 2)
