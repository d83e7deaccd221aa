"""envhub-jumanji: the conformance kit on jumanji's environments, plus ground truth against jumanji itself.

The whole kit on all 25 available environments takes about 20 minutes on a shared 2-CPU machine
(compiling dominates: MMST alone 4 minutes), so by default it runs on a subset chosen to cover every
mapping (KIT_ENVS) and every other environment gets a smoke test (one compiled rollout of 2 envs
across a time limit: spaces, dtypes, structure, flags). ENVHUB_FULL_KIT=1 runs the kit on all of them.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp
import jumanji
import numpy as np
import pytest
from jumanji import specs
from jumanji.types import StepType

import envhub
from envhub import testing
from envhub.plugin import EnvUnavailableError, InvalidArgumentError, spaces

ALL = envhub.list_envs("jumanji")
AVAILABLE = [s.id for s in ALL if s.available]


def test_every_jumanji_env_is_listed():
    assert sorted(s.name for s in ALL) == sorted(jumanji.registered_environments())
    assert [s.name for s in ALL if not s.available] == ["Sokoban-v0"]


def test_sokoban_is_unavailable_with_the_reason():
    with pytest.raises(
        EnvUnavailableError, match=r"'jumanji/Sokoban-v0' is listed but unavailable here: .*downloads the Boxoban"
    ):
        envhub.make("jumanji/Sokoban-v0")


# --- the conformance kit ----------------------------------------------------------------------------


def _conformance_class(env_id: str, **attrs) -> type:
    """One kit class per env: its checks share one probe, so each env's programs compile once."""
    name = "TestKit_" + "".join(c if c.isalnum() else "_" for c in env_id.split("/", 1)[1])
    return type(name, (testing.ConformanceTests,), {"env_id": env_id, "__module__": __name__, **attrs})


# Which mapping each covers: Snake a time limit jumanji calls termination (moved to envhub's base), a
# Tree of arrays; TSP no limit of its own and a corrected spec; LevelBasedForaging jumanji's own
# truncation, multi-agent rewards and discounts; MultiCVRP an int16 BoundedArray action, nested NamedTuples.
# (SearchAndRescue, the one with continuous actions, takes 3 minutes: smoke and ground truth below.)
KIT_ENVS = ("Snake-v1", "TSP-v1", "LevelBasedForaging-v0", "MultiCVRP-v0")
FULL_KIT = os.environ.get("ENVHUB_FULL_KIT") == "1"
SMOKE_ENVS = [] if FULL_KIT else [i for i in AVAILABLE if i.split("/")[1] not in KIT_ENVS]

for _env_id in AVAILABLE if FULL_KIT else [f"jumanji/{n}" for n in KIT_ENVS]:
    _cls = _conformance_class(_env_id)
    globals()[_cls.__name__] = _cls


class TestBatchedSnake(testing.ConformanceTests):
    env_id = "jumanji/Snake-v1"
    make_kwargs = {"num_envs": 3}


@pytest.mark.parametrize("env_id", SMOKE_ENVS)
def test_smoke(env_id):
    """One compiled rollout of 2 envs with a time limit of 3: observations inside the spaces, dtypes,
    one structure from init and step, an episode end every 3 steps at the latest."""
    env = envhub.make(env_id, num_envs=2, max_episode_steps=3)
    space = env.observation_space

    @jax.jit
    def run(key):
        state, first = env.init(key)

        def body(state, k):
            state, ts = env.step(k, state, env.action_space.sample(jax.random.fold_in(k, 1)))
            return state, (ts, space.contains(ts.obs) & space.contains(ts.final_obs))

        last, (steps, inside) = jax.lax.scan(body, state, jax.random.split(key, 7))
        return state, first, last, steps, inside & space.contains(first.obs)

    state, first, last, steps, inside = run(jax.random.key(0))
    assert bool(inside.all()), f"{env_id}: an observation outside {space}"
    assert jax.tree.structure(state) == jax.tree.structure(last)
    assert jax.tree.structure(first) == jax.tree.structure(jax.tree.map(lambda x: x[0], steps))
    assert (steps.reward.dtype, steps.terminated.dtype, steps.reward.shape) == (jnp.float32, jnp.bool_, (7, 2))
    done = np.asarray(steps.done)
    assert not np.any(np.asarray(steps.terminated) & np.asarray(steps.truncated))
    assert done[:3].any(axis=0).all() and done[3:6].any(axis=0).all()  # every env ends within 3 steps


# --- ground truth: envhub and jumanji side by side ----------------------------------------------------


def _rollout_with_states(env, key, actions):
    """Step env with fixed actions; return per-step (state before, step key, TimeStep)."""
    state, _ = env.init(key)
    keys = jax.random.split(jax.random.fold_in(key, 1), len(actions))

    def body(state, xs):
        k, a = xs
        new_state, ts = env.step(k, state, a)
        return new_state, (state, ts)

    _, (before, ts) = jax.jit(lambda s: jax.lax.scan(body, s, (keys, actions)))(state)
    return before, keys, ts


def _raw_side_by_side(raw, before, keys, actions):
    """jumanji's own step from envhub's state before each step, and its reset with the key envhub resets with."""
    _, raw_ts = jax.jit(jax.vmap(raw.step))(before.env, actions)
    reset_keys = jax.vmap(lambda k: jax.random.split(k)[1])(keys)
    _, first = jax.jit(jax.vmap(raw.reset))(reset_keys)
    return raw_ts, first


def _assert_trees_equal(a, b, where=None):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        if where is not None:
            x, y = x[where], y[where]
        if x.dtype.kind == "f":  # two compiled programs may round the last bit differently
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7)
        else:
            np.testing.assert_array_equal(x, y)


def _assert_obs_follow_jumanji(ts, raw_ts, first):
    last = np.asarray(raw_ts.step_type == StepType.LAST)
    _assert_trees_equal(ts.final_obs, raw_ts.observation)  # the observation each step reached
    _assert_trees_equal(ts.obs, raw_ts.observation, ~last)  # no episode end: the same
    _assert_trees_equal(ts.obs, first.observation, last)  # an episode end: jumanji's reset with the reset key
    assert ts.reward.dtype == jnp.float32


def test_snake_termination_and_time_limit_against_jumanji():
    """Snake ends an episode at its time limit with discount 0; envhub reports it as truncation (and a
    real death on the limit step as termination), with jumanji's observations and rewards."""
    limit = 9
    env = envhub.make("jumanji/Snake-v1", max_episode_steps=limit)
    actions = jax.random.randint(jax.random.key(5), (80,), 0, 4)
    before, keys, ts = _rollout_with_states(env, jax.random.key(0), actions)
    raw = jumanji.make("Snake-v1", time_limit=limit)  # jumanji's own env with the same limit
    raw_ts, first = _raw_side_by_side(raw, before, keys, actions)
    _assert_obs_follow_jumanji(ts, raw_ts, first)
    np.testing.assert_array_equal(ts.reward, raw_ts.reward)
    # Without the limit (one step longer), jumanji tells which of its limit-step ends are real deaths.
    no_limit_ts, _ = _raw_side_by_side(jumanji.make("Snake-v1", time_limit=limit + 1), before, keys, actions)
    dead = np.asarray(no_limit_ts.step_type == StepType.LAST)
    raw_last = np.asarray(raw_ts.step_type == StepType.LAST)
    assert np.all(np.asarray(raw_ts.discount)[raw_last] == 0)  # jumanji: every end is discount 0
    np.testing.assert_array_equal(ts.terminated, dead)
    np.testing.assert_array_equal(ts.truncated, raw_last & ~dead)
    at_limit = np.asarray(raw_ts.observation.step_count) == limit
    np.testing.assert_array_equal(ts.truncated, at_limit & ~dead)
    assert ts.terminated.any() and ts.truncated.any()  # both ends happened


def test_connector_truncation_and_termination_are_jumanji_flags():
    """Connector truncates itself (LAST, discount 1 for agents still going): kept as truncation;
    every agent done is LAST with discount 0: termination. Rewards are the agents' sum."""
    from jumanji.environments.routing.connector.generator import RandomWalkGenerator

    limit, small = 12, {"generator": RandomWalkGenerator(grid_size=5, num_agents=3)}  # agents block each other
    env = envhub.make("jumanji/Connector-v3", max_episode_steps=limit, **small)
    raw = jumanji.make("Connector-v3", time_limit=limit, **small)
    actions = jax.random.randint(jax.random.key(2), (120, 3), 0, 5)
    before, keys, ts = _rollout_with_states(env, jax.random.key(1), actions)
    raw_ts, first = _raw_side_by_side(raw, before, keys, actions)
    _assert_obs_follow_jumanji(ts, raw_ts, first)
    last = np.asarray(raw_ts.step_type == StepType.LAST)
    all_zero = np.all(np.asarray(raw_ts.discount) == 0, axis=-1)
    np.testing.assert_array_equal(ts.terminated, last & all_zero)
    np.testing.assert_array_equal(ts.truncated, last & ~all_zero)
    np.testing.assert_allclose(ts.reward, np.asarray(raw_ts.reward).sum(-1), rtol=1e-6)
    np.testing.assert_array_equal(ts.info["agent_rewards"], raw_ts.reward)
    np.testing.assert_array_equal(ts.info["discount"], raw_ts.discount)
    assert ts.terminated.any() and ts.truncated.any()


def test_jumanji_time_limit_is_max_episode_steps_and_time_limit_an_alias():
    assert envhub.make("jumanji/Snake-v1").metadata["time_limit"] == 4000
    snake = envhub.make("jumanji/Snake-v1", time_limit=30).unwrapped
    assert snake.max_episode_steps == 30 and snake.jumanji_env.time_limit == 31  # jumanji's never fires
    connector = envhub.make("jumanji/Connector-v3", max_episode_steps=20).unwrapped
    assert connector.max_episode_steps is None and connector.jumanji_env.time_limit == 20  # its own truncation
    tsp = envhub.make("jumanji/TSP-v1", max_episode_steps=5).unwrapped  # no limit of its own: the base's
    assert tsp.max_episode_steps == 5
    with pytest.raises(envhub.EnvKwargsError, match="pass only max_episode_steps"):
        envhub.make("jumanji/Snake-v1", max_episode_steps=9, time_limit=9)
    with pytest.raises(
        InvalidArgumentError,
        match=r"max_episode_steps=0 \(jumanji's Snake-v1 needs a time limit; .*\): use an int >= 1",
    ):
        envhub.make("jumanji/Snake-v1", max_episode_steps=0)


def test_search_and_rescue_rewards_scale_with_the_limit_envhub_truncates_at():
    limit = 40
    env = envhub.make("jumanji/SearchAndRescue-v0", max_episode_steps=limit)
    raw = jumanji.make("SearchAndRescue-v0", time_limit=limit)
    actions = jax.random.uniform(jax.random.key(3), (limit, 2, 2), minval=-1.0, maxval=1.0)
    before, keys, ts = _rollout_with_states(env, jax.random.key(4), actions)
    raw_ts, _ = _raw_side_by_side(raw, before, keys, actions)
    np.testing.assert_allclose(ts.info["agent_rewards"], raw_ts.reward, rtol=1e-6)
    _assert_trees_equal(ts.final_obs, raw_ts.observation)
    assert bool(ts.truncated[-1]) or bool(ts.terminated[-1])


@pytest.mark.parametrize(
    "env_name, kwargs, rule",
    [
        ("Snake-v1", {"num_rows": 1}, "from 2 to 2048"),  # 1x1: the fruit on the head, every action masked
        ("Snake-v1", {"num_cols": 0}, "from 2 to 2048"),
        ("Snake-v1", {"num_rows": 10**9}, "from 2 to 2048"),  # refused before jumanji allocates the board
        ("Game2048-v1", {"board_size": 1}, "from 2 to 2048"),  # full at reset, every action masked
        ("Game2048-v1", {"board_size": 2049}, "from 2 to 2048"),
        ("Tetris-v0", {"num_cols": 10**6}, "from 2 to 2048"),
    ],
)
def test_board_sizes_have_a_floor_and_a_cap(env_name, kwargs, rule):
    ((name, value),) = kwargs.items()
    with pytest.raises(InvalidArgumentError, match=rf"{name}={value} is out of range: it must be {rule}"):
        envhub.make(f"jumanji/{env_name}", **kwargs)


def test_the_smallest_snake_board_runs():
    env = envhub.make("jumanji/Snake-v1", num_rows=2, num_cols=2)
    state, step = env.init(jax.random.key(0))
    assert step.obs.grid.shape == (2, 2, 5) and bool(step.obs.action_mask.any())
    state, step = env.step(jax.random.key(1), state, int(jnp.argmax(step.obs.action_mask)))
    assert step.reward.shape == ()


def test_kwargs_reach_jumanji():
    snake = envhub.make("jumanji/Snake-v1", num_rows=6, num_cols=7, num_envs=2)
    assert snake.observation_space.spaces.grid.shape == (2, 6, 7, 5)
    assert snake.init(jax.random.key(0))[1].obs.grid.shape == (2, 6, 7, 5)


def test_specs_convert_with_exact_dtypes():
    from envhub_jumanji.environment import to_envhub_space

    assert to_envhub_space(specs.DiscreteArray(5, jnp.int16)) == spaces.Discrete(5, dtype=np.int16)
    multi = specs.MultiDiscreteArray(jnp.array([[2, 3], [4, 5]], jnp.int32))
    assert to_envhub_space(multi) == spaces.MultiDiscrete([[2, 3], [4, 5]], dtype=np.int32)
    bounded_int = specs.BoundedArray((2,), jnp.int16, 0, 21)
    assert to_envhub_space(bounded_int) == spaces.MultiDiscrete([22, 22], dtype=np.int16)
    box = specs.BoundedArray((2, 2), jnp.float32, -1.0, 1.0)
    assert to_envhub_space(box) == spaces.Box(-1.0, 1.0, (2, 2), np.float32)
    assert to_envhub_space(specs.Array((3,), jnp.float32)) == spaces.Box(-np.inf, np.inf, (3,), np.float32)
    assert to_envhub_space(specs.Array((3,), bool)) == spaces.Box(False, True, (3,), np.bool_)
    maze = envhub.make("jumanji/Maze-v0")  # a NamedTuple observation holding NamedTuples: one Tree
    assert type(maze.observation_space.spaces).__name__ == "Observation"
    assert maze.observation_space.spaces.agent_position.row == spaces.Discrete(10, dtype=np.int32)
    assert envhub.make("jumanji/MultiCVRP-v0").action_space.dtype == np.int16
    tsp = envhub.make("jumanji/TSP-v1")  # jumanji's spec misses the -1 before the first city
    assert tsp.observation_space.spaces.position == spaces.Discrete(21, start=-1, dtype=np.int32)
    assert int(tsp.init(jax.random.key(0))[1].obs.position) == -1


def test_info_keeps_jumanji_extras_and_discount():
    env = envhub.make("jumanji/Game2048-v1")
    state, ts0 = env.init(jax.random.key(0))
    _, ts1 = env.step(jax.random.key(1), state, 0)
    assert set(ts0.info) == set(ts1.info) == {"highest_tile", "discount"}
    assert float(ts1.info["discount"]) == 1.0 and int(ts0.info["highest_tile"]) == 0
