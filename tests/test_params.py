"""Parameters as data (docs/params.md): per-env params in the state, set_params for the next episodes, the one
check of params (envhub.core.params), wrappers passing them on, and the kit's params check failing where it must."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envhub import spaces, testing, wrappers
from envhub.errors import InvalidArgumentError
from envhub.plugin import Bounds, JaxEnvironment, JaxStep

N = 4


class Drift(JaxEnvironment):
    """A point at ``start`` (+ up to 0.01 from the key) moves ``speed`` right per step on action 1, left on 0;
    reaching ``goal`` terminates. Params: ``{"start", "speed", "goal"}``; ``bug`` breaks them on purpose."""

    def __init__(self, num_envs: int | None = None, bug: str | None = None, **kwargs: Any):
        self.bug = bug
        super().__init__(
            observation_space=spaces.Box(-np.inf, np.inf, (1,)),
            action_space=spaces.Discrete(2),
            num_envs=num_envs,
            max_episode_steps=50,
            **kwargs,
        )

    @property
    def default_params(self) -> Any:
        return {"goal": 1.0, "speed": 0.25, "start": 0.0}

    @property
    def params_bounds(self) -> Bounds:
        return Bounds(speed=(0.0, None))

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        if self.bug == "ignores_params":
            params = self.default_params
        x = params["start"] + 0.01 * jax.random.uniform(key)
        return x, jnp.reshape(x, (1,))

    def _step_one(self, key: jax.Array, x: Any, action: Any, params: Any) -> JaxStep:
        if self.bug == "ignores_params":
            params = self.default_params
        x = x + params["speed"] * (2 * action - 1)
        return JaxStep(
            state=x,
            obs=jnp.reshape(x, (1,)),
            reward=jnp.float32(0.0),
            terminated=x >= params["goal"],
            truncated=False,
            info={},
        )


def per_env(**values: Any) -> dict[str, jax.Array]:
    return {"goal": 1.0, "speed": 0.25, "start": 0.0, **{k: jnp.asarray(v, jnp.float32) for k, v in values.items()}}


def test_per_env_params_live_in_the_state_and_reach_each_env():
    env = Drift(num_envs=N)
    state, ts = env.init(jax.random.key(0), params=per_env(start=[0.0, 10.0, 20.0, 30.0], goal=100.0))
    np.testing.assert_allclose(ts.obs[:, 0], [0, 10, 20, 30], atol=0.011)
    assert state.params["speed"].shape == (N,)  # a shared value is repeated per env in the state
    state, ts = env.step(jax.random.key(1), state, jnp.ones(N, jnp.int32))
    np.testing.assert_allclose(ts.obs[:, 0] - np.asarray(state.params["start"]), 0.25, atol=0.011)


@pytest.mark.parametrize("spares", [True, False])
def test_auto_resets_restart_each_env_with_its_own_next_params(spares):
    env = Drift(num_envs=N, reset_spares=spares)
    starts = jnp.array([0.0, 0.5, 0.25, 0.75])
    state, _ = env.init(jax.random.key(0), params=per_env(start=starts))
    step = jax.jit(env.step)
    seen = []
    for i in range(12):  # every env reaches the goal (1.0) and restarts, some twice
        state, ts = step(jax.random.key(i), state, jnp.ones(N, jnp.int32))
        seen.append(np.where(ts.done, ts.obs[:, 0], np.nan))
    restarts = np.stack(seen)
    for env_index in range(N):
        column = restarts[:, env_index][~np.isnan(restarts[:, env_index])]
        assert column.size >= 1
        np.testing.assert_allclose(column, float(starts[env_index]), atol=0.011)


def test_set_params_reaches_the_next_episodes_only_of_the_chosen_envs_without_compiling_again():
    env = Drift(num_envs=N)
    init, step, reset, set_params = (jax.jit(f) for f in (env.init, env.step, env.reset, env.set_params))
    state, _ = init(jax.random.key(0), per_env(goal=1.0, speed=0.25, start=0.0))
    state, ts = step(jax.random.key(1), state, jnp.ones(N, jnp.int32))
    where = jnp.array([True, False, True, False])
    state = set_params(state, per_env(start=5.0, speed=1.0), where)
    np.testing.assert_allclose(state.params["speed"], 0.25)  # running episodes keep their params
    np.testing.assert_allclose(state.next_params["speed"], [1.0, 0.25, 1.0, 0.25])
    for i in range(5):
        state, ts = step(jax.random.key(2 + i), state, jnp.ones(N, jnp.int32))
    np.testing.assert_allclose(state.params["start"], [5.0, 0.0, 5.0, 0.0])  # after the episodes ended
    state, ts = reset(jax.random.key(9), state, None, per_env(start=[1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_allclose(ts.obs[:, 0], [1, 2, 3, 4], atol=0.011)
    init(jax.random.key(0), per_env(goal=3.0, speed=0.5, start=1.0))  # new values of the same shapes
    set_params(state, per_env(start=2.0, speed=0.5), where)
    assert (init._cache_size(), step._cache_size(), reset._cache_size(), set_params._cache_size()) == (1, 1, 1, 1)


def test_reset_where_with_params_changes_only_the_reset_envs():
    env = Drift(num_envs=N)
    state, _ = env.init(jax.random.key(0))
    where = jnp.array([False, True, False, True])
    state, ts = env.reset(jax.random.key(1), state, where=where, params=per_env(start=7.0))
    np.testing.assert_allclose(state.params["start"], [0.0, 7.0, 0.0, 7.0])
    np.testing.assert_allclose(np.asarray(state.env)[where], 7.0, atol=0.011)


def test_unbatched_env_vmaps_over_params_and_wrappers_pass_them_on():
    env = wrappers.RecordEpisodeStatistics(Drift())
    speeds = jnp.array([0.1, 0.3])
    state, _ = jax.vmap(lambda k, s: env.init(k, params=per_env(speed=s)))(
        jax.random.split(jax.random.key(0), 2), speeds
    )
    state, ts = jax.vmap(env.step)(jax.random.split(jax.random.key(1), 2), state, jnp.ones(2, jnp.int32))
    np.testing.assert_allclose(ts.obs[:, 0], [0.1, 0.3], atol=0.011)
    batched = wrappers.VmapEnvironment(Drift(), 2)
    state, _ = batched.init(jax.random.key(0), params=per_env(start=[3.0, 4.0]))
    state = batched.set_params(state, per_env(start=9.0))
    np.testing.assert_allclose(state.next_params["start"], [9.0, 9.0])
    assert env.default_params == Drift().default_params


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (
            {"goal": 1.0, "speed": 0.25},
            r"params of '<unregistered>' have the structure .* not that of env.default_params",
        ),
        (
            per_env(speed=[1.0, 2.0]),
            r"params\['speed'\] of '<unregistered>' has shape \(2,\); it takes shape \(\) \(one value for every env\) or \(4,\)",
        ),
        (per_env(speed=-1.0), r"params\['speed'\] of '<unregistered>' has the value -1.0; it must be >= 0.0"),
        (
            {**per_env(), "goal": jnp.array(1 + 2j)},
            r"params\['goal'\] .* has dtype complex64, which cannot be cast safely to its dtype float32",
        ),
    ],
)
def test_bad_params_are_refused_naming_the_leaf_and_the_state_stays_usable(params, match):
    env = Drift(num_envs=N)
    state, _ = env.init(jax.random.key(0))
    for call in (lambda: env.init(jax.random.key(1), params=params), lambda: env.set_params(state, params)):
        with pytest.raises(InvalidArgumentError, match=match):
            call()
    if "value" not in match:  # structure, shape and dtype are refused while tracing too, with the same message
        with pytest.raises(InvalidArgumentError, match=match):
            jax.jit(lambda k: env.init(k, params=params))(jax.random.key(1))
    env.step(jax.random.key(2), state, jnp.ones(N, jnp.int32))


def test_params_on_an_env_without_params_are_refused():
    env = testing.toy_envs.Corridor()
    assert env.default_params is None
    with pytest.raises(InvalidArgumentError, match=r"params were given, but '<unregistered>' has no parameters"):
        env.init(jax.random.key(0), params={"length": 3})


def test_cached_reset_mode_refuses_set_params_with_the_fix():
    env = Drift(num_envs=N, reset_mode="cached")
    state, _ = env.init(jax.random.key(0))
    with pytest.raises(InvalidArgumentError, match=r"reset_mode='cached' .* pass them to env.reset"):
        env.set_params(state, per_env(start=1.0))


@pytest.mark.parametrize("num_envs", [None, N])
def test_kit_params_check_passes_on_a_correct_env(num_envs):
    result = testing.run_check("params", lambda **kw: Drift(num_envs=num_envs, **kw), testing.Options())
    assert result.passed, result.message


class ReversedRows(Drift):
    """A base that routes per-env params to the wrong envs (env i gets env N-1-i's)."""

    def _state_params(self, params: Any) -> Any:
        return jax.tree.map(lambda x: x[::-1], super()._state_params(params))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda **kw: Drift(bug="ignores_params", **kw), "the backend ignores the params"),
        (lambda **kw: ReversedRows(num_envs=N, **kw), "params reach the wrong env"),
    ],
)
def test_kit_params_check_fails_where_params_are_broken(make, message):
    result = testing.run_check("params", make, testing.Options())
    assert result.failed and message in result.message, result.message


def test_kit_params_check_is_skipped_with_the_reason_where_it_does_not_apply():
    corridor = testing.run_check("params", lambda **kw: testing.toy_envs.Corridor(**kw), testing.Options())
    assert corridor.skipped and "has no parameters" in corridor.message
    off = testing.run_check("params", lambda **kw: Drift(**kw), testing.Options(params=False))
    assert off.skipped and "Options(params=False)" in off.message


def test_own_spares_share_the_pool_while_params_are_uniform_and_keep_rows_once_they_differ():
    """reset_from_own_spares with a toy reset (the row's params plus a random fraction, per key)."""
    from envhub.native.resets import no_spares, reset_from_own_spares

    n = 4
    reset_fn = lambda key, row: row + jax.random.uniform(key) * 0.5  # noqa: E731
    step = jax.jit(
        lambda key, done, states, spares, rows: reset_from_own_spares(reset_fn, key, done, states, spares, rows)
    )
    states = jnp.zeros(n)
    for rows, shared in ((jnp.full(n, 10.0), True), (jnp.arange(n) * 10.0, False)):
        spares = no_spares(states, own=True)
        refills = []
        for t in range(6):
            done = jnp.array([True, False, False, False])  # env 0 ends on every step
            era = int(spares.era.max())
            new, spares = step(jax.random.key(t), done, states, spares, rows)
            refills.append(int(spares.era.max()) > era)
            np.testing.assert_allclose(
                np.asarray(new)[np.asarray(done)] // 1 // 10 * 10, np.asarray(rows)[np.asarray(done)]
            )
        # uniform: the 4 spares serve 4 ends, one refill per 4 steps; differing: env 0 needs its own spare each step
        assert refills == ([True, False, False, False, True, False] if shared else [True] * 6), (shared, refills)


def test_a_step_never_writes_the_params_so_a_scan_carries_them_unchanged():
    """Params as data cost nothing per step (benchmarks/params_rollout.py): the step passes the state's params
    through untouched (a new episode switches to ``next_params`` by a flag), so XLA keeps them loop-invariant."""
    env = Drift(num_envs=N)
    state, _ = env.init(jax.random.key(0), params=per_env(start=[0.0, 0.5, 0.25, 0.75]))
    for field in ("next_params", "prior_params"):
        stepped = lambda s, field=field: getattr(env.step(jax.random.key(1), s, jnp.ones(N, jnp.int32))[0], field)  # noqa: E731
        jaxpr = jax.make_jaxpr(stepped)(state).jaxpr
        paths = jax.tree_util.tree_flatten_with_path(state)[0]
        passed_through = [id(v) for v, (path, _) in zip(jaxpr.invars, paths) if field in jax.tree_util.keystr(path)]
        assert [id(v) for v in jaxpr.outvars] == passed_through, field


def test_reset_where_without_params_restarts_the_chosen_envs_on_their_next_params():
    env = Drift(num_envs=N)
    state, _ = env.init(jax.random.key(0))
    where = jnp.array([True, True, False, False])
    state = env.set_params(state, per_env(start=3.0), where=where)
    state, ts = env.reset(jax.random.key(1), state, where=jnp.array([True, False, True, False]))
    np.testing.assert_allclose(state.params["start"], [3.0, 0.0, 0.0, 0.0])  # env 1 waits for its episode's end
    np.testing.assert_allclose(np.asarray(state.env)[[0, 2]], [3.0, 0.0], atol=0.011)  # the reset envs' starts


class FixedStart(Drift):
    """Drift whose reset ignores its params (as gymnax's do): one pool of spares serves every env."""

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        x = 0.01 * jax.random.uniform(key)
        return x, jnp.reshape(x, (1,))


class ParamStart(FixedStart):
    """FixedStart whose reset reads its params (to no effect): each env needs its own spare."""

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        x, obs = super()._reset_one(key, params)
        return x + 0 * params["start"], obs


def refills_and_steps(env: JaxEnvironment, speeds: jax.Array, steps: int = 12) -> tuple[int, np.ndarray]:
    state, _ = env.init(jax.random.key(0), params=per_env(speed=speeds))
    step, refills, moves = jax.jit(env.step), 0, []
    for i in range(steps):
        era, before = int(state.spares.era.max()), np.asarray(state.env)
        state, ts = step(jax.random.key(i), state, jnp.ones(N, jnp.int32))
        moves.append(np.asarray(ts.final_obs)[:, 0] - before)
        refills += int(state.spares.era.max()) > era
    return refills, np.stack(moves)


def test_spares_of_a_reset_that_ignores_params_are_shared_by_envs_with_different_params():
    from envhub.native.resets import reads_params

    assert reads_params(ParamStart()._reset_one, jax.random.key(0), per_env())
    assert not reads_params(FixedStart()._reset_one, jax.random.key(0), per_env())
    speeds = jnp.array([0.25, 0.5, 1.0, 0.5])  # episodes of 4, 2, 1 and 2 steps
    shared, shared_moves = refills_and_steps(FixedStart(num_envs=N), speeds)
    own, own_moves = refills_and_steps(ParamStart(num_envs=N), speeds)
    np.testing.assert_allclose(shared_moves, np.broadcast_to(speeds, shared_moves.shape), atol=1e-6)
    np.testing.assert_allclose(own_moves, shared_moves, atol=1e-6)  # each env steps with its own params
    assert own == 12 and shared < own, (shared, own)  # env 2 ends every step: its own spare is refilled every step
