"""Invalid action values on envpool: refused on the host (eagerly and under ``jit``), changing nothing."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from envhub_envpool import xla_path
from envhub_envpool.environment import EnvpoolState

import envhub
from envhub.plugin import ActionError, HostState, StaleStateError, values_checked_by_caller

warnings.filterwarnings("ignore", module="gymnasium")
KEY = jax.random.key(0)
ID = "envpool/CartPole-v1"


def actions(num_envs, value):
    return jnp.full(() if num_envs is None else (num_envs,), value, jnp.int32)


def refused_in_jit(value, index=""):
    """What a jitted step says when the host refuses the action (JAX re-raises it wrapped)."""
    return rf"ActionError: Invalid action for 'envpool/CartPole-v1': {value}{index} is outside \[0, 2\)"


def same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


def run(env, step, state, num_envs, values):
    """Step ``state`` with each action value in turn; every TimeStep and the last state's leaves."""
    out = []
    for value in values:
        state, ts = step(KEY, state, actions(num_envs, value))
        out.append(ts)
    return state, out


@pytest.mark.parametrize("num_envs", [None, 4])
def test_a_refused_action_in_jit_leaves_the_state_and_the_pool_as_they_were(num_envs):
    env, clean = envhub.make(ID, num_envs=num_envs), envhub.make(ID, num_envs=num_envs)
    state, _ = env.init(KEY)
    assert isinstance(state, EnvpoolState)  # the fast path: envpool's XLA send/recv in the program
    traces = []

    @jax.jit
    def step(key, state, action):
        traces.append(1)
        return env.step(key, state, action)

    index = "" if num_envs is None else r" at index \(0,\)"
    with pytest.raises(jax.errors.JaxRuntimeError, match=refused_in_jit(7, index)):
        jax.block_until_ready(step(KEY, state, actions(num_envs, 7)))
    with pytest.raises(ActionError, match=r"'envpool/CartPole-v1': 7.* is outside \[0, 2\)"):
        env.step(KEY, state, actions(num_envs, 7))  # eagerly: refused before envpool is touched
    # The same state steps on, through the same compiled step (no retrace) and eagerly, exactly as a
    # pool that never saw the refusal.
    after, ts = run(env, step, state, num_envs, [1, 0, 1])
    after, eager = run(env, env.step, after, num_envs, [1, 1])
    assert len(traces) == 1
    expected_state, expected = run(clean, jax.jit(clean.step), clean.init(KEY)[0], num_envs, [1, 0, 1, 1, 1])
    assert same(ts + eager, expected)
    assert int(jnp.ravel(after.version)[0]) == int(jnp.ravel(expected_state.version)[0]) == 5
    # refused again, late in the run: the same
    with pytest.raises(jax.errors.JaxRuntimeError, match=refused_in_jit(-1, index)):
        jax.block_until_ready(step(KEY, after, actions(num_envs, -1)))
    assert same(step(KEY, after, actions(num_envs, 0))[1], clean.step(KEY, expected_state, actions(num_envs, 0))[1])
    env.close()
    clean.close()


def test_without_the_in_place_restore_a_new_counter_and_a_retrace_keep_the_state_usable(monkeypatch):
    """The public route (a jax whose Ref cannot take a new buffer): a new Ref and JAX's caches cleared."""
    monkeypatch.setattr(xla_path, "restore_in_place", lambda ref, value: False)
    with envhub.make(ID, num_envs=2) as env:
        state, _ = env.init(KEY)
        traces = []

        @jax.jit
        def step(key, state, action):
            traces.append(1)
            return env.step(key, state, action)

        with pytest.raises(jax.errors.JaxRuntimeError, match=refused_in_jit(7, r" at index \(1,\)")):
            jax.block_until_ready(step(KEY, state, jnp.array([0, 7], jnp.int32)))
        state, _ = step(KEY, state, jnp.array([0, 1], jnp.int32))
        state, _ = step(KEY, state, jnp.array([1, 1], jnp.int32))
        assert len(traces) == 2 and int(state.version[0]) == 2  # traced again once, with the new Ref


def test_the_first_invalid_value_is_named_with_the_count():
    with envhub.make(ID, num_envs=4) as env:
        state, _ = env.init(KEY)
        bad = jnp.array([0, 1, 9, 2], jnp.int32)
        with pytest.raises(jax.errors.JaxRuntimeError, match=refused_in_jit(9, r" at index \(2,\)") + r" \(2 of 4"):
            jax.block_until_ready(jax.jit(env.step)(KEY, state, bad))
        assert jax.jit(env.step)(KEY, state, jnp.zeros(4, jnp.int32))[1].obs.shape == (4, 4)


def test_a_refusal_inside_a_jitted_rollout_keeps_the_steps_that_ran():
    """A pool is one trajectory: the steps before the refused one happened, so the state passed to
    the rollout is then stale (and says so); the pool is intact and a new state steps."""
    with envhub.make(ID, num_envs=2) as env:
        state, _ = env.init(KEY)
        rollout = jax.jit(lambda s, a: jax.lax.scan(lambda s, a: env.step(KEY, s, a), s, a))
        acts = jnp.array([[0, 1], [1, 1], [1, 5]], jnp.int32)
        with pytest.raises(jax.errors.JaxRuntimeError, match=refused_in_jit(5, r" at index \(1,\)")):
            jax.block_until_ready(rollout(state, acts))
        with pytest.raises(StaleStateError, match=r"given a state from step 0, but its newest state is from step 2"):
            env.step(KEY, state, jnp.zeros(2, jnp.int32))


def test_validate_actions_false_and_a_checking_caller_skip_the_check():
    for validate in (True, False):
        env = envhub.make(ID, num_envs=2, validate_actions=validate)
        state, _ = env.init(KEY)
        step = jax.jit(env.step)
        if validate:
            with values_checked_by_caller(env):  # traced inside: the caller checks on the host
                state, _ = step(KEY, state, jnp.array([0, 7], jnp.int32))
        else:
            state, _ = step(KEY, state, jnp.array([0, 7], jnp.int32))
        assert int(state.version[0]) == 1  # envpool took the value (as it does outside envhub)
        env.close()


def test_a_refused_action_on_the_host_bridge_leaves_the_state_usable():
    env, clean = envhub.make(ID, num_envs=2, fast_path=False), envhub.make(ID, num_envs=2, fast_path=False)
    state, _ = env.init(KEY)
    assert isinstance(state, HostState)
    step = jax.jit(env.step)
    with pytest.raises(jax.errors.JaxRuntimeError, match=refused_in_jit(3, r" at index \(1,\)")):
        jax.block_until_ready(step(KEY, state, jnp.array([1, 3], jnp.int32)))
    _, ts = run(env, step, state, 2, [1, 0])
    assert same(ts, run(clean, clean.step, clean.init(KEY)[0], 2, [1, 0])[1])
    env.close()
    clean.close()


def test_strict_mode_refusal_leaves_the_fast_path_state_usable():
    with envhub.make(ID, num_envs=2, validate_actions="strict") as env:
        state, _ = env.init(KEY)
        step = jax.jit(env.step)
        with pytest.raises(jax.errors.JaxRuntimeError, match=refused_in_jit(7, r" at index \(0,\)")):
            jax.block_until_ready(step(KEY, state, jnp.array([7, 0], jnp.int32)))
        assert int(step(KEY, state, jnp.zeros(2, jnp.int32))[0].version[0]) == 1
