import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub.errors import InvalidArgumentError
from envhub.testing.toy_envs import Corridor
from envhub.wrappers import VmapEnvironment


def corridor(**kwargs):
    env = Corridor(bug="ignores_key", **kwargs)
    env.id = "toy/Corridor-v0"
    return env


def test_rollout_trajectory_and_transitions_across_episode_ends():
    env = corridor(length=3, max_steps=4)
    always_right = lambda key, obs: jnp.int32(1)  # noqa: E731
    state, last, traj = jax.jit(lambda k: envhub.rollout(env, always_right, k, 7))(jax.random.key(0))
    assert traj.obs.shape == (8, 2) and traj.action.shape == (7,)
    np.testing.assert_array_equal(traj.obs[:, 0], [0, 1, 2, 0, 1, 2, 0, 1])
    np.testing.assert_array_equal(traj.final_obs[:, 0], [1, 2, 3, 1, 2, 3, 1])
    tr = traj.transitions(gamma=0.9)
    np.testing.assert_array_equal(tr.obs[:, 0], [0, 1, 2, 0, 1, 2, 0])
    np.testing.assert_array_equal(tr.next_obs[:, 0], [1, 2, 3, 1, 2, 3, 1])  # the reached cell, not the reset one
    np.testing.assert_allclose(tr.discount, [0.9, 0.9, 0, 0.9, 0.9, 0, 0.9])
    np.testing.assert_array_equal(last.obs, traj.obs[-1])


def test_truncation_keeps_the_discount_and_bootstraps_from_final_obs():
    env = corridor(length=10, max_steps=3)
    dither = lambda key, obs: (obs[0] == 0).astype(jnp.int32)  # noqa: E731 - right from 0, else left
    _, _, traj = envhub.rollout(env, dither, jax.random.key(0), 6)
    tr = traj.transitions(gamma=0.5)
    assert np.flatnonzero(traj.truncated).tolist() == [2, 5]
    np.testing.assert_allclose(tr.discount, 0.5)  # nothing terminal: always bootstrap
    assert tr.done.tolist() == [False, False, True, False, False, True]
    np.testing.assert_array_equal(tr.next_obs[2], traj.final_obs[2])


def test_rollout_continues_from_a_start_and_works_batched():
    env = VmapEnvironment(corridor(length=4), 3)
    policy = envhub.random_policy(env)
    state, last, first_half = envhub.rollout(env, policy, jax.random.key(1), 5)
    _, _, second_half = envhub.rollout(env, policy, jax.random.key(2), 5, start=(state, last))
    np.testing.assert_array_equal(second_half.obs[0], first_half.obs[-1])
    assert second_half.obs.shape == (6, 3, 2) and second_half.reward.shape == (5, 3)


def test_a_rollout_length_is_an_int_from_1_to_int32_max():
    """Refused before any work, naming the value: 10**11 was an OverflowError from inside jax (and from
    ``envhub record --steps 99999999999`` an "internal error")."""
    env, policy, key = corridor(), lambda k, obs: 1, jax.random.key(0)
    for bad in (0, -3, True, 2.0, "5"):
        with pytest.raises(InvalidArgumentError, match=rf"^num_steps={bad!r} for rollout: use an int >= 1\.$"):
            envhub.rollout(env, policy, key, bad)
    with pytest.raises(
        InvalidArgumentError, match=r"num_steps=100000000000 for rollout: use an int from 1 to 2\*\*31 - 1"
    ):
        envhub.rollout(env, policy, key, 10**11)
    with pytest.raises(InvalidArgumentError, match=r"steps=2147483648 for record: use an int from 1 to 2\*\*31 - 1"):
        envhub.record(env, policy, key, 2**31, "never-written.gif")
    assert envhub.rollout(env, policy, key, np.int64(3))[2].reward.shape == (3,)  # a NumPy int is an int


def test_a_non_callable_policy_or_a_non_env_is_refused_with_the_form_expected():
    env = corridor(length=3)
    with pytest.raises(InvalidArgumentError, match=r"policy=None is not callable: .*policy\(key, obs\) -> action"):
        envhub.rollout(env, None, jax.random.key(0), 3)
    with pytest.raises(
        InvalidArgumentError,
        match=r"random_policy takes an envhub Environment, not a str .*random_policy\(envhub\.make\('gymnax/",
    ):
        envhub.random_policy("gymnax/CartPole-v1")
