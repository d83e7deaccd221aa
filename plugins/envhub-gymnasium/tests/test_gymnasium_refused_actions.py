"""Invalid action values on a gymnasium host env, under ``jit`` and ``jax.vmap``: the host callback
refuses them before any host env steps, and the state passed in steps on as if nothing happened."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub.plugin import ActionError

KEY = jax.random.key(0)
REFUSED = r"ActionError: Invalid action for 'gymnasium/CartPole-v1': {}{} is outside \[0, 2\)"


def same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


def rollout(step, state, actions):
    out = []
    for action in actions:
        state, ts = step(KEY, state, action)
        out.append(ts)
    return state, out


@pytest.mark.parametrize("num_envs", [None, 3])
def test_a_refused_action_in_jit_leaves_the_state_usable(num_envs):
    env = envhub.make("gymnasium/CartPole-v1", num_envs=num_envs)
    clean = envhub.make("gymnasium/CartPole-v1", num_envs=num_envs)  # never sees a refusal
    shape = env.action_space.shape
    state, _ = env.init(KEY)
    step = jax.jit(env.step)
    index = r" at index \(0,\)" if num_envs else ""
    with pytest.raises(jax.errors.JaxRuntimeError, match=REFUSED.format(2, index)):
        jax.block_until_ready(step(KEY, state, jnp.full(shape, 2, jnp.int32)))
    with pytest.raises(ActionError, match=r"'gymnasium/CartPole-v1': 2"):
        env.step(KEY, state, jnp.full(shape, 2, jnp.int32))
    actions = [jnp.full(shape, a, jnp.int32) for a in (1, 0, 1)]
    after, ts = rollout(step, state, actions)  # the state given to the refused call: jitted, then eagerly
    after, eager = rollout(env.step, after, actions)
    _, expected = rollout(jax.jit(clean.step), clean.init(KEY)[0], actions + actions)
    assert same(ts + eager, expected)
    env.close()
    clean.close()


def test_a_refused_row_under_vmap_steps_no_host_env():
    """vmap of an unbatched host env: one host env per row; one bad row refuses the call before any row steps."""
    env, clean = envhub.make("gymnasium/CartPole-v1"), envhub.make("gymnasium/CartPole-v1")
    keys = jax.random.split(KEY, 3)
    states, _ = jax.vmap(env.init)(keys)
    step = jax.jit(jax.vmap(env.step))
    with pytest.raises(jax.errors.JaxRuntimeError, match=REFUSED.format(-1, "")):
        jax.block_until_ready(step(keys, states, jnp.array([1, -1, 0], jnp.int32)))
    good = jnp.array([1, 1, 0], jnp.int32)
    after, ts = step(keys, states, good)  # every row's state is the one given: none was stepped
    _, expected = jax.jit(jax.vmap(clean.step))(keys, jax.vmap(clean.init)(keys)[0], good)
    assert same(ts, expected)
    assert np.array_equal(after.version, np.ones(3, np.int32))
    env.close()
    clean.close()


def test_validate_actions_false_passes_the_value_to_gymnasium():
    with envhub.make("gymnasium/CartPole-v1", validate_actions=False) as env:
        state, _ = env.init(KEY)
        with pytest.raises(jax.errors.JaxRuntimeError, match=r"raised in step\(\): AssertionError: array\(\[2\]\)"):
            jax.block_until_ready(jax.jit(env.step)(KEY, state, jnp.int32(2)))  # gymnasium's own check
