"""envhub.JaxEnvironment, the base of JAX-native backends, on a tiny env whose every step can be predicted."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub import spaces
from envhub.errors import InvalidArgumentError
from envhub.native import resets
from envhub.native.environment import take_time_limit

RESETS: list[int] = []  # one entry per reset that really ran (a debug callback inside _reset_one)


class Walk(envhub.JaxEnvironment[jax.Array, jax.Array, jax.Array]):
    """Position starts at a random 0..2 (``start`` if given), moves by the action; reaching ``goal`` terminates."""

    def __init__(self, goal: int = 5, start: int | None = None, **base: object):
        super().__init__(**base)  # type: ignore[arg-type]
        self.goal, self.start = goal, start

    @property
    def single_observation_space(self) -> spaces.Space:
        return spaces.Box(-100.0, 100.0, ())

    @property
    def single_action_space(self) -> spaces.Space:
        return spaces.Discrete(2)

    def _reset_one(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        jax.debug.callback(lambda: RESETS.append(1))
        pos = jax.random.randint(key, (), 0, 3) if self.start is None else jnp.int32(self.start)
        return pos, pos.astype(jnp.float32)

    def _step_one(self, key: jax.Array, pos: jax.Array, action: jax.Array) -> envhub.JaxStep:
        pos = pos + action
        # Python scalars in the info: the base must cast their weak types away
        return envhub.JaxStep(
            state=pos,
            obs=pos.astype(jnp.float32),
            reward=1.0,
            terminated=pos >= self.goal,
            truncated=False,
            info={"moved": action > 0},
        )


def _run(env: envhub.Environment, actions: jax.Array):
    state, first = env.init(jax.random.key(0))

    def body(state, xs):
        state, ts = env.step(xs[0], state, xs[1])
        return state, (state, ts)

    keys = jax.random.split(jax.random.key(1), len(actions))
    return first, jax.jit(lambda s: jax.lax.scan(body, s, (keys, actions)))(state)[1]


def test_termination_and_truncation_with_final_obs_and_the_flag_rule():
    env = Walk(goal=3, start=0, max_episode_steps=3)
    _, (states, ts) = _run(env, jnp.array([1, 1, 1, 0, 0, 0, 1, 1], jnp.int32))
    # goal at step 3 (also the limit: terminated wins), then 3 steps of no move: truncated
    assert ts.terminated.tolist() == [False, False, True, False, False, False, False, False]
    assert ts.truncated.tolist() == [False, False, False, False, False, True, False, False]
    assert ts.final_obs.tolist() == [1, 2, 3, 0, 0, 0, 1, 2] and ts.obs.tolist() == [1, 2, 0, 0, 0, 0, 1, 2]
    assert states.steps.tolist() == [1, 2, 0, 1, 2, 0, 1, 2]
    assert ts.reward.dtype == jnp.float32 and ts.info["moved"].dtype == jnp.bool_


@pytest.mark.parametrize("base", [{}, {"num_envs": 4}, {"num_envs": 4, "reset_spares": False}])
def test_resets_run_only_on_steps_where_some_env_is_done(base):
    inner = Walk(goal=3, start=0, **base)  # every env ends on step 3, none before
    env = inner if "num_envs" in base else envhub.wrappers.VmapEnvironment(inner, 4)
    RESETS.clear()
    _, (_, ts) = _run(env, jnp.ones((4, 4), jnp.int32))
    jax.effects_barrier()
    assert ts.done.tolist() == [[False] * 4, [False] * 4, [True] * 4, [False] * 4]
    # a callback under vmap runs once per batch: init's reset, then one batched reset on step 3 only
    assert len(RESETS) == 2, len(RESETS)


def test_under_vmap_only_done_envs_get_a_fresh_state():
    env = envhub.wrappers.VmapEnvironment(Walk(goal=2, start=0), 3)
    actions = jnp.array([[1, 0, 1], [1, 0, 0]], jnp.int32)
    _, (_, ts) = _run(env, actions)
    assert ts.terminated.tolist() == [[False, False, False], [True, False, False]]
    assert ts.obs[1].tolist() == [0, 0, 1] and ts.final_obs[1].tolist() == [2, 0, 1]


@pytest.mark.parametrize("spares", [True, False])
def test_batched_real_resets_give_each_episode_its_own_start(spares):
    env = Walk(goal=1, num_envs=8, reset_spares=spares)  # every env starting at 0 ends on its first step
    _, (_, ts) = _run(env, jnp.ones((6, 8), jnp.int32))
    starts = np.asarray(ts.obs)[np.asarray(ts.done)]
    assert len(set(starts.tolist())) > 1  # fresh random starts, not one cached state
    assert env.reset_spares is spares


def test_cached_mode_restarts_from_the_first_state():
    env = Walk(goal=5, reset_mode="cached", max_episode_steps=2)
    first, (_, ts) = _run(env, jnp.zeros(6, jnp.int32))
    assert np.asarray(ts.obs)[np.asarray(ts.done)].tolist() == [float(first.obs)] * 3


def test_init_info_is_zeros_shaped_like_a_step_and_step_traces_once():
    env = Walk(num_envs=2)
    state, ts = env.init(jax.random.key(0))
    assert ts.info["moved"].tolist() == [False, False]
    traces = []
    step = jax.jit(lambda k, s, a: (traces.append(1), env.step(k, s, a))[1])
    for i in range(3):
        state, ts = step(jax.random.key(i), state, jnp.ones(2, jnp.int32))
    assert len(traces) == 1


def test_eager_calls_use_one_compiled_program_per_method():
    env = Walk()
    state, _ = env.init(jax.random.key(0))
    for i in range(3):
        state, ts = env.step(jax.random.key(i), state, 1)
    assert sorted(env.__dict__["_compiled"]) == ["_init_traced", "_step_traced"]
    assert float(ts.final_obs) == float(state.env)


def test_a_backend_function_is_traced_once_for_every_program_of_an_env():
    env, traces = Walk(num_envs=2, max_episode_steps=3), []
    step_one = env._step_one
    env._step_one = lambda *args: (traces.append(1), step_one(*args))[1]
    state, _ = env.init(jax.random.key(0))
    rollout = lambda steps: jax.jit(lambda s: _run_from(env, s, steps))  # noqa: E731
    rollout(4)(state), rollout(5)(state), jax.jit(env.step)(jax.random.key(0), state, jnp.ones(2, jnp.int32))
    assert len(traces) == 1  # three programs (and init's info shapes), one trace of the backend's step


def test_a_changed_attribute_is_traced_and_compiled_again():
    env = Walk(goal=2, start=0)
    state, _ = env.init(jax.random.key(0))
    assert bool(env.step(jax.random.key(1), state, 1)[1].terminated) is False  # eager: compiled with goal=2
    env.goal = 1
    assert bool(env.step(jax.random.key(1), state, 1)[1].terminated) is True
    assert bool(jax.jit(env.step)(jax.random.key(1), state, 1)[1].terminated) is True


def _run_from(env: envhub.Environment, state, steps: int):
    keys = jax.random.split(jax.random.key(1), steps)
    return jax.lax.scan(lambda s, k: env.step(k, s, jnp.ones(2, jnp.int32)), state, keys)[1]


def test_an_overridden_restart_turns_spares_off_and_is_used():
    class Carry(Walk):
        def _restart_one(self, key, pos):
            return pos * 0 - 7, jnp.float32(-7)

    env = Carry(goal=1, num_envs=2, start=0)
    assert not env.reset_spares
    _, (_, ts) = _run(env, jnp.ones((1, 2), jnp.int32))
    assert ts.obs.tolist() == [[-7, -7]]


def test_arguments_are_checked():
    with pytest.raises(InvalidArgumentError, match=r"max_episode_steps=0: use None \(no limit\) or an int >= 1"):
        Walk(max_episode_steps=0)
    with pytest.raises(InvalidArgumentError, match=r"reset_mode='soon': use one of \('real', 'cached'\)"):
        Walk(reset_mode="soon")
    with pytest.raises(InvalidArgumentError, match=r"num_envs=0"):
        Walk(num_envs=0)
    with pytest.raises(InvalidArgumentError, match=r"reset_chunk=0: use None \(all at once\) or an int >= 1"):
        Walk(num_envs=4, reset_chunk=0)


@pytest.mark.parametrize("spares", [True, False])
def test_chunked_resets_give_the_same_episodes_as_vmapped_ones(spares):
    # 10 envs in chunks of 4: two full chunks and a remainder of 2, for init and the auto-resets
    runs = [
        _run(Walk(goal=2, num_envs=10, reset_spares=spares, reset_chunk=c), jnp.ones((5, 10), jnp.int32))
        for c in (None, 4)
    ]
    (first, (_, ts)), (chunked_first, (_, chunked)) = runs
    np.testing.assert_array_equal(first.obs, chunked_first.obs)
    assert np.asarray(ts.done).any()
    for a, b in zip(jax.tree.leaves(ts), jax.tree.leaves(chunked)):
        np.testing.assert_array_equal(a, b)


def test_vmap_in_chunks_maps_in_sequence_past_the_chunk():
    fn = lambda k, x: jax.random.uniform(k) + x  # noqa: E731
    keys, xs = jax.random.split(jax.random.key(0), 7), jnp.arange(7.0)
    chunked = jax.jit(resets.vmap_in_chunks(fn, 3))
    np.testing.assert_allclose(chunked(keys, xs), jax.vmap(fn)(keys, xs))
    assert "scan" in str(jax.make_jaxpr(resets.vmap_in_chunks(fn, 3))(keys, xs))
    assert "scan" not in str(jax.make_jaxpr(resets.vmap_in_chunks(fn, 7))(keys, xs))  # fits: one vmap


def test_take_time_limit_accepts_one_name():
    assert take_time_limit({"max_episode_steps": 3}, "limit", 9) == 3
    assert take_time_limit({"limit": 4}, "limit", 9) == 4
    assert take_time_limit({}, "limit", 9) == 9
    with pytest.raises(InvalidArgumentError, match="pass only max_episode_steps"):
        take_time_limit({"max_episode_steps": 3, "limit": 4}, "limit", 9)


def test_reset_if_done_alone_and_under_nested_vmap():
    restart = lambda k, s: s * 0 + 9  # noqa: E731
    assert int(resets.reset_if_done(restart, jax.random.key(0), jnp.bool_(True), jnp.int32(1))) == 9
    assert int(resets.reset_if_done(restart, jax.random.key(0), jnp.bool_(False), jnp.int32(1))) == 1
    keys = jax.random.split(jax.random.key(0), 4).reshape(2, 2)
    done = jnp.array([[True, False], [False, False]])
    out = jax.vmap(jax.vmap(lambda k, d, s: resets.reset_if_done(restart, k, d, s)))(keys, done, jnp.ones((2, 2)))
    assert out.tolist() == [[9, 1], [1, 1]]
