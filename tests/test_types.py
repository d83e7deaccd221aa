import jax
import jax.numpy as jnp
import numpy as np

from envhub import TimeStep


def test_timestep_is_a_pytree_with_done():
    ts = TimeStep(
        obs=jnp.zeros(2),
        reward=jnp.float32(1.0),
        terminated=jnp.bool_(True),
        truncated=jnp.bool_(False),
        final_obs=jnp.ones(2),
        info={"x": jnp.int32(3)},
    )
    assert bool(ts.done)
    leaves, treedef = jax.tree.flatten(ts)
    assert len(leaves) == 6
    doubled = jax.tree.map(lambda x: x * 2, ts)
    assert isinstance(doubled, TimeStep) and int(doubled.info["x"]) == 6
    assert bool(jax.jit(lambda t: t.done)(ts))


def test_first_timestep_has_zero_reward_and_no_flags():
    ts = TimeStep.first(jnp.zeros((4, 2)), {}, batch_shape=(4,))
    assert ts.reward.shape == (4,) and ts.reward.dtype == jnp.float32
    assert not bool(ts.done.any()) and ts.final_obs is ts.obs


def test_transition_applies_the_flag_rule_and_dtypes():
    from envhub.core.types import truncated_unless_terminated

    ts = TimeStep.transition(
        obs=jnp.zeros((3, 2)),
        reward=jnp.array([1, 2, 3]),  # int: cast to float32
        terminated=jnp.array([True, False, True]),
        truncated=jnp.array([True, True, False]),
        final_obs=jnp.ones((3, 2)),
        info={},
    )
    assert ts.reward.dtype == jnp.float32 and ts.terminated.dtype == jnp.bool_
    np.testing.assert_array_equal(ts.truncated, [False, True, False])  # terminal at the limit: terminated only
    # the same rule on NumPy (host backends use it on the host)
    out = truncated_unless_terminated(np.array([True, False]), np.array([True, True]))
    assert isinstance(out, np.ndarray) and out.tolist() == [False, True]


def test_termination_and_truncation_constructors():
    reached, first = jnp.ones((3, 2)), jnp.zeros((3, 2))
    ts = TimeStep.termination(first, jnp.array([1, 2, 3]), {}, final_obs=reached)
    assert ts.terminated.tolist() == [True] * 3 and ts.truncated.tolist() == [False] * 3
    assert ts.reward.dtype == jnp.float32 and (ts.final_obs == reached).all() and (ts.obs == first).all()
    ts = TimeStep.truncation(reached, jnp.float32(0.5), {"k": jnp.int32(1)})
    assert bool(ts.truncated) and not bool(ts.terminated) and ts.final_obs is ts.obs


def test_host_state_handle_and_version():
    from envhub.core.types import HostState

    state = HostState(jnp.int32(1), jnp.int32(4))
    assert (int(state.handle), int(state.version)) == (1, 4)
