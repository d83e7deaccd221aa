"""envhub-xminigrid: ground truth against xminigrid itself, the kit on representative envs, a smoke test on every id."""

from __future__ import annotations

import os
import urllib.error

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import xminigrid
from envhub_xminigrid.levels import pad_ruleset
from xminigrid import benchmarks
from xminigrid.core.constants import TILES_REGISTRY, Colors, Tiles
from xminigrid.core.goals import AgentHoldGoal
from xminigrid.core.rules import EmptyRule
from xminigrid.types import RuleSet, StepType

import envhub
from envhub import testing
from envhub.plugin import EnvKwargsError, EnvUnavailableError, InvalidArgumentError, spaces

ALL = envhub.list_envs("xminigrid")

# The kit compiles a handful of programs per env, which takes 20-60 s per env on a shared 2-core CPU:
# it runs on a representative subset (a MiniGrid env with randomised layouts whose episodes end by the
# goal and by the time limit; an XLand env, batched) and every id gets the smoke test below. The
# ground-truth tests step MiniGrid-EmptyRandom-5x5 through many episode ends of both kinds.
KIT = {"MiniGrid-DoorKey-5x5": {}, "XLand-MiniGrid-R1-9x9": {"num_envs": 2}}
# Tracing an id's init and step takes 2-12 s here; the smoke test traces only these unless
# ENVHUB_XMINIGRID_ALL=1 (the others still build and check their spaces, which traces one reset).
TRACED = {"MiniGrid-MemoryS8", "XLand-MiniGrid-R2-9x9"}


def test_every_xminigrid_id_is_listed_and_available():
    assert [s.name for s in ALL] == sorted(xminigrid.registered_environments(), key=str.lower)
    assert all(s.available for s in ALL)


for _name, _kwargs in KIT.items():
    _cls = type(
        "TestKit_" + _name.replace("-", "_"),
        (testing.ConformanceTests,),
        {"env_id": f"xminigrid/{_name}", "make_kwargs": _kwargs, "__module__": __name__},
    )
    globals()[_cls.__name__] = _cls


@pytest.mark.parametrize("name", [s.name for s in ALL])
def test_smoke_every_id(name):
    """make, spaces as xminigrid declares them, and (for TRACED ids, or all with ENVHUB_XMINIGRID_ALL=1) init/step traced."""
    env = envhub.make(f"xminigrid/{name}", num_envs=2)
    raw, params = xminigrid.make(name)
    assert env.single_action_space == spaces.Discrete(raw.num_actions(params))
    assert env.single_observation_space.shape == tuple(raw.observation_shape(params))
    assert env.metadata["time_limit"] == params.max_steps
    if name not in TRACED and os.environ.get("ENVHUB_XMINIGRID_ALL") != "1":
        pytest.skip("tracing init/step of every id takes minutes on this machine: set ENVHUB_XMINIGRID_ALL=1")
    state, first = jax.eval_shape(env.init, jax.random.key(0))
    _, ts = jax.eval_shape(env.step, jax.random.key(1), state, jnp.zeros(2, jnp.int32))
    assert ts.obs.shape == first.obs.shape == (2, *env.single_observation_space.shape)
    assert ts.terminated.dtype == ts.truncated.dtype == jnp.bool_ and ts.reward.dtype == jnp.float32


# --- ground truth: envhub and raw xminigrid side by side ------------------------------------------

NAME, LIMIT, STEPS = "MiniGrid-EmptyRandom-5x5", 9, 120


def _side_by_side(max_steps: int, actions: jax.Array, key: jax.Array):
    """envhub's steps and raw xminigrid's, from the same state with the same actions.

    The raw loop is xminigrid's own reset/step; where its TimeStep is LAST it resets with the key
    envhub's reset uses (``split(step_key)[1]``): the same episodes, so everything must match.
    """
    env = envhub.make(f"xminigrid/{NAME}", max_episode_steps=max_steps)
    raw, params = xminigrid.make(NAME, max_steps=max_steps)
    keys = jax.random.split(key, len(actions))

    @jax.jit
    def run(key):
        state, first = env.init(key)
        raw_ts = raw.reset(params, key)

        def body(carry, xs):
            state, raw_ts = carry
            k, a = xs
            state, ts = env.step(k, state, a)
            reached = raw.step(params, raw_ts, a)
            fresh = raw.reset(params, jax.random.split(k)[1])
            raw_next = jax.lax.cond(reached.last(), lambda: fresh, lambda: reached)
            return (state, raw_next), (ts, reached, raw_next.observation)

        _, out = jax.lax.scan(body, (state, raw_ts), (keys, actions))
        return first, raw_ts, out

    return run(key)


@pytest.fixture(scope="module")
def run():
    # forward 60%, turn left / right 20% each: the goal is reached now and then, the time limit more often
    actions = jax.random.choice(jax.random.key(0), 3, (STEPS,), p=jnp.array([0.6, 0.2, 0.2]))
    return actions, _side_by_side(LIMIT, actions, jax.random.key(0))


def test_trajectory_equals_xminigrid_across_goal_and_time_limit(run):
    _, (first, raw_first, (ts, reached, raw_obs)) = run
    np.testing.assert_array_equal(first.obs, raw_first.observation)
    np.testing.assert_array_equal(ts.final_obs, reached.observation)  # the observation the step reached
    np.testing.assert_array_equal(ts.obs, raw_obs)  # after a reset: the new episode's first
    # max_steps is data here (a traced divisor), a constant in raw xminigrid, which XLA may turn into a product
    # with its reciprocal: rewards agree to float32 rounding (1 - 0.9 * 9 / 9: 0.10000002 against 0.09999996)
    np.testing.assert_allclose(ts.reward, reached.reward, rtol=0, atol=1e-6)
    last, discount = np.asarray(reached.step_type) == StepType.LAST, np.asarray(reached.discount)
    np.testing.assert_array_equal(ts.terminated, last & (discount == 0))
    np.testing.assert_array_equal(ts.truncated, last & (discount == 1))
    at_limit = np.asarray(reached.state.step_num) == LIMIT
    np.testing.assert_array_equal(ts.truncated, at_limit & ~np.asarray(ts.terminated))
    assert ts.terminated.sum() >= 3 and ts.truncated.sum() >= 3, "both kinds of episode end must occur"
    assert (np.asarray(reached.reward)[ts.terminated] > 0).all()  # the goal pays 1 - 0.9 * steps / max_steps
    ended = np.asarray(ts.done)
    assert not (np.asarray(ts.obs)[ended] == np.asarray(ts.final_obs)[ended]).all(axis=(1, 2, 3)).all()
    np.testing.assert_array_equal(np.asarray(ts.obs)[~ended], np.asarray(ts.final_obs)[~ended])


def test_terminated_wins_when_the_goal_is_reached_on_the_time_limit_step(run):
    _, (_, _, (ts, reached, _)) = run
    both = np.flatnonzero(np.asarray(ts.terminated) & (np.asarray(reached.state.step_num) == LIMIT))
    assert len(both), "the run must reach the goal on the last step of some episode (keys are fixed)"
    t = int(both[0])
    assert int(reached.step_type[t]) == StepType.LAST and float(reached.discount[t]) == 0.0  # xminigrid hides the limit
    assert bool(ts.terminated[t]) and not bool(ts.truncated[t])
    assert 0 < float(ts.reward[t]) == pytest.approx(1 - 0.9 * LIMIT / LIMIT)


def test_max_episode_steps_is_xminigrid_max_steps():
    env = envhub.make("xminigrid/MiniGrid-Empty-8x8", max_episode_steps=12)
    assert env.unwrapped.params.max_steps == 12 and env.metadata["time_limit"] == 12
    assert envhub.make("xminigrid/MiniGrid-Empty-8x8", max_steps=12).unwrapped.params.max_steps == 12
    bigger = envhub.make("xminigrid/MiniGrid-Empty-8x8", height=10, width=10)  # max_steps follows: 4 * h * w
    assert (
        bigger.unwrapped.params.max_steps
        == xminigrid.make("MiniGrid-Empty-8x8")[0].default_params(height=10, width=10).max_steps
    )


# --- rulesets and benchmarks (XLand) ---------------------------------------------------------------


def _tiny_benchmark() -> benchmarks.Benchmark:
    """Two rulesets: hold the red ball, or hold the green square (each placed in the room)."""
    ball, square = TILES_REGISTRY[Tiles.BALL, Colors.RED], TILES_REGISTRY[Tiles.SQUARE, Colors.GREEN]
    goals = jnp.stack([AgentHoldGoal(tile=ball).encode(), AgentHoldGoal(tile=square).encode()])
    rules = jnp.stack([EmptyRule().encode()[None], EmptyRule().encode()[None]])
    return benchmarks.Benchmark(
        goals=goals, rules=rules, init_tiles=jnp.stack([ball[None], square[None]]), num_rules=jnp.ones(2, jnp.int32)
    )


def test_a_ruleset_of_a_benchmark_is_played_every_episode():
    bench = _tiny_benchmark()
    env = envhub.make("xminigrid/XLand-MiniGrid-R1-9x9", benchmark=bench, ruleset_id=1)
    state, _ = env.init(jax.random.key(0))
    np.testing.assert_array_equal(state.env.state.goal_encoding, bench.goals[1])
    assert (np.asarray(state.env.state.grid) == np.asarray(bench.init_tiles[1, 0])).all(-1).sum() == 1


def test_without_ruleset_id_every_episode_samples_its_ruleset():
    bench = _tiny_benchmark()
    env = envhub.make("xminigrid/XLand-MiniGrid-R1-9x9", benchmark=bench, num_envs=16)
    assert env.metadata["rulesets"] == "sampled from the benchmark per episode"
    assert list(env.default_params) == ["max_steps"]  # the benchmark places the levels: no ruleset param
    state, _ = env.init(jax.random.key(0))
    goals = {tuple(g) for g in np.asarray(state.env.state.goal_encoding)}
    assert goals == {tuple(np.asarray(g)) for g in bench.goals}


def test_a_named_benchmark_loads_from_xminigrid_data_folder(tmp_path, monkeypatch):
    bench = _tiny_benchmark()
    monkeypatch.setattr(benchmarks, "DATA_PATH", str(tmp_path))
    benchmarks.save_bz2_pickle(
        {k: np.asarray(getattr(bench, k)) for k in ("goals", "rules", "init_tiles", "num_rules")},
        str(tmp_path / benchmarks.NAME2HFFILENAME["trivial-21k"]),
    )
    env = envhub.make("xminigrid/XLand-MiniGrid-R1-9x9", benchmark="trivial-21k", ruleset_id=0)
    np.testing.assert_array_equal(env.unwrapped.params.ruleset.goal, bench.goals[0])


def test_a_benchmark_that_needs_the_network_says_how_to_get_it(tmp_path, monkeypatch):
    def offline(repo_id, filename):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(benchmarks, "DATA_PATH", str(tmp_path))
    monkeypatch.setattr(benchmarks, "_download_from_hf", offline)
    with pytest.raises(EnvUnavailableError, match=r"benchmark 'small-1m'.*nor download it from huggingface.co"):
        envhub.make("xminigrid/XLand-MiniGrid-R1-9x9", benchmark="small-1m")


@pytest.mark.parametrize(
    "env_name, kwargs, match",
    [
        ("MiniGrid-Empty-8x8", {"benchmark": "trivial-21k"}, r"rulesets apply to the XLand-MiniGrid-\* environments"),
        ("XLand-MiniGrid-R1-9x9", {"ruleset_id": 3}, r"ruleset_id=3 .* indexes a benchmark: pass benchmark= too"),
        ("XLand-MiniGrid-R1-9x9", {"benchmark": "trivial-2k"}, r"benchmark='trivial-2k' is not an xminigrid benchmark"),
        ("XLand-MiniGrid-R1-9x9", {"benchmark": _tiny_benchmark(), "ruleset_id": 2}, r"ruleset_id=2 .* \[0, 2\)"),
        ("XLand-MiniGrid-R1-9x9", {"ruleset": "x", "benchmark": "trivial-21k"}, r"pass it or benchmark=, not both"),
        (
            "MiniGrid-Empty-8x8",
            {"colour": 3},
            r"unknown keyword argument colour=3; .* accepts params: .*height: int = 8",
        ),
        ("MiniGrid-Empty-8x8", {"max_episode_steps": 0}, r"max_episode_steps=0 \(xminigrid's max_steps\)"),
        ("MiniGrid-Empty-8x8", {"max_episode_steps": 5, "max_steps": 5}, r"pass only max_episode_steps"),
    ],
)
def test_bad_arguments_say_what_to_do(env_name, kwargs, match):
    # names and types: EnvKwargsError before the factory runs; values: InvalidArgumentError from the plugin
    with pytest.raises((InvalidArgumentError, EnvKwargsError), match=match):
        envhub.make(f"xminigrid/{env_name}", **kwargs)


@pytest.mark.parametrize("kwargs", [{"height": 10**9}, {"width": 2049}, {"view_size": 10**6}])
def test_grid_sizes_are_capped_before_xminigrid_allocates(kwargs):
    ((name, value),) = kwargs.items()
    with pytest.raises(InvalidArgumentError, match=rf"{name}={value} is out of range: it must be from \d+ to 2048"):
        envhub.make("xminigrid/MiniGrid-Empty-8x8", **kwargs)


def test_a_ruleset_object_is_accepted():
    bench = _tiny_benchmark()
    ruleset = RuleSet(goal=bench.goals[0], rules=bench.rules[0], init_tiles=bench.init_tiles[0])
    env = envhub.make("xminigrid/XLand-MiniGrid-R1-9x9", ruleset=ruleset)
    np.testing.assert_array_equal(env.unwrapped.params.ruleset.goal, bench.goals[0])


def test_render_draws_the_grid():
    env = envhub.make("xminigrid/MiniGrid-Empty-5x5", num_envs=2)
    frames = env.render(env.init(jax.random.key(0))[0])
    assert frames.dtype == np.uint8 and frames.ndim == 4 and frames.shape[0] == 2 and frames.var() > 0


# --- parameters as data: levels (rulesets) and time limits per env --------------------------------------
# xminigrid's params have no float leaf for the kit's params check to scale (max_steps is int32, a ruleset
# uint8): the kit varies max_steps (CHECK_OPTIONS), and these tests route per-env levels and count compiles.


def _hold(tile) -> RuleSet:
    """A level: hold ``tile``, placed in the room; padded to 2 rules and 2 tiles."""
    ruleset = RuleSet(goal=AgentHoldGoal(tile=tile).encode(), rules=EmptyRule().encode()[None], init_tiles=tile[None])
    return pad_ruleset(ruleset, 2, 2)


def test_per_env_levels_and_time_limits_reach_each_env_without_compiling_again():
    ball, square = TILES_REGISTRY[Tiles.BALL, Colors.RED], TILES_REGISTRY[Tiles.SQUARE, Colors.GREEN]
    env = envhub.make("xminigrid/XLand-MiniGrid-R1-9x9", num_envs=2, ruleset=_hold(ball))
    shapes = jax.tree.map(jnp.shape, env.default_params)
    assert shapes == {"max_steps": (), "ruleset": RuleSet(goal=(5,), rules=(2, 7), init_tiles=(2, 2))}

    @jax.jit
    def run(key, params):
        state, _ = env.init(key, params=params)

        def body(state, k):
            state, ts = env.step(k, state, jnp.full(2, 2, jnp.int32))  # turn: no goal is reached
            return state, ts.truncated

        return state.env.state, jax.lax.scan(body, state, jax.random.split(key, 6))[1]

    levels = jax.tree.map(lambda a, b: jnp.stack([a, b]), _hold(ball), _hold(square))
    for order in (np.array([0, 1]), np.array([1, 0])):
        params = {
            "max_steps": jnp.array([3, 5])[order],
            "ruleset": jax.tree.map(lambda x, order=order: x[order], levels),
        }
        first, truncated = run(jax.random.key(0), params)
        for i, tile in enumerate(np.array([ball, square])[order]):
            np.testing.assert_array_equal(first.goal_encoding[i], levels.goal[order[i]])
            assert (np.asarray(first.grid[i]) == tile).all(-1).sum() == 1  # its level's tile, placed once
            assert (np.asarray(first.grid[i]) == np.array([ball, square])[order[1 - i]]).all(-1).sum() == 0
        for i, limit in enumerate(np.asarray(params["max_steps"])):  # truncated every max_steps steps, each by its own
            assert np.flatnonzero(np.asarray(truncated)[:, i]).tolist() == list(range(limit - 1, 6, limit))
    assert run._cache_size() == 1


def test_params_bounds_and_which_params_an_env_has():
    env = envhub.make("xminigrid/MiniGrid-Empty-5x5")
    assert jax.tree.map(jnp.shape, env.default_params) == {"max_steps": ()}  # MiniGrid: its task is fixed
    with pytest.raises(InvalidArgumentError, match=r"params\['max_steps'\] .* has the value 0; it must be >= 1"):
        env.init(jax.random.key(0), params={"max_steps": 0})
    xland = envhub.make("xminigrid/XLand-MiniGrid-R1-9x9", num_envs=2)  # xminigrid's empty level: 1 rule, 1 tile
    wrong = {"max_steps": 10, "ruleset": _hold(TILES_REGISTRY[Tiles.BALL, Colors.RED])}
    shape = r"params\['ruleset'\].rules .* has shape \(2, 7\); it takes shape \(1, 7\)"
    with pytest.raises(InvalidArgumentError, match=shape):
        xland.init(jax.random.key(0), params=wrong)
    with pytest.raises(InvalidArgumentError, match="more than num_rules=1 and num_tiles=1"):
        pad_ruleset(_hold(TILES_REGISTRY[Tiles.BALL, Colors.RED]), 1, 1)
