"""``envhub.checked`` raises ``ActionError`` on every backend (a host env's, wrapped by JAX, unwrapped), and says
it must be the outermost call when a JAX transformation traces it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub.errors import ActionError, InvalidArgumentError
from envhub.testing.toy_envs import Corridor

KEY = jax.random.key(0)


@pytest.mark.requires_plugin("gymnasium")
def test_checked_host_step_raises_the_action_error_and_the_state_steps_again():
    with envhub.make("gymnasium/CartPole-v1") as env:
        state, _ = env.init(KEY)
        step = envhub.checked(env.step)
        with pytest.raises(ActionError, match=r"^Invalid action for 'gymnasium/CartPole-v1': 7 is outside \[0, 2\)"):
            step(KEY, state, jnp.int32(7))
        state, ts = step(KEY, state, jnp.int32(1))  # the refused call left the state usable
        assert float(ts.reward) == 1.0 and ts.obs.shape == (4,)


def test_checked_called_while_traced_says_it_already_compiles():
    env = Corridor()
    state, _ = env.init(KEY)
    step = envhub.checked(env.step)
    already = r"envhub.checked\(step\) was called with traced values .* already compiles .* outermost call"
    with pytest.raises(InvalidArgumentError, match=already):
        jax.jit(step)(KEY, state, jnp.int32(1))
    with pytest.raises(InvalidArgumentError, match=already):
        jax.vmap(step, in_axes=(None, None, 0))(KEY, state, jnp.ones(3, jnp.int32))
    with pytest.raises(InvalidArgumentError, match=r"envhub.checked\(<lambda>\) was called with traced values"):
        jax.jit(envhub.checked(lambda x: x + 1))(1.0)  # no check in the program: refused the same way
    state, ts = step(KEY, state, jnp.int32(1))  # the outermost call works, and checks
    assert np.isfinite(float(ts.reward))
    with pytest.raises(ActionError, match=r"^Invalid action for '<unregistered>': 3 is outside \[0, 2\)"):
        step(KEY, state, jnp.int32(3))


def test_checked_refuses_a_non_callable_with_an_envhub_error():
    with pytest.raises(
        InvalidArgumentError, match=r"envhub.checked needs a callable, not int 5: .*checked\(env\.step\)"
    ):
        envhub.checked(5)
