"""``env.host_loop()``: a host env stepped from Python on NumPy arrays (``envhub.core.loop``), on the tiny NumPy walker
of ``test_host``: the same episodes as ``init``/``step`` for the same key and actions, on a host env of its own; the
checks every loop shares (a refused action steps nothing, a step before reset, a closed env); no loop for a wrapped
or a JAX-native env. ALE's own loop is tested against ALE in ``plugins/envhub-ale/tests``."""

import jax
import numpy as np
import pytest
from test_host import Walk

from envhub.errors import ActionError, ClosedEnvironmentError, InvalidArgumentError
from envhub.testing.toy_envs import Corridor
from envhub.wrappers import RecordEpisodeStatistics

KEY = jax.random.key(5)


def actions(t: int) -> np.ndarray:
    return np.array([1, t % 2, 1], np.int32)  # walkers 0 and 2 reach the end (terminated), 1 is cut (max_steps=8)


def test_a_loop_plays_the_episodes_of_init_and_step_on_a_host_env_of_its_own():
    env = Walk(num_envs=3, max_steps=8)
    loop = env.host_loop()
    state, first = env.init(KEY)
    got = loop.reset(KEY)
    for t in range(20):  # the env's own state and the loop step in turn: neither moves the other's walkers
        for name in ("obs", "reward", "terminated", "truncated", "final_obs"):
            np.testing.assert_array_equal(getattr(got, name), np.asarray(getattr(first, name)), err_msg=f"{name} {t}")
        np.testing.assert_array_equal(got.info["t"], np.asarray(first.info["t"]))
        assert isinstance(got.obs, np.ndarray) and not got.obs.flags.writeable
        state, first = env.step(KEY, state, actions(t))
        got = loop.step(actions(t))
    assert env.live_host_envs() == 2
    env.close()


def test_a_refused_action_steps_nothing_and_a_step_before_reset_or_after_close_is_refused():
    env, twin = Walk(num_envs=3), Walk(num_envs=3)
    loop, ref = env.host_loop(), twin.host_loop()
    with pytest.raises(InvalidArgumentError, match=r"^step\(\) of the host loop of 'test/Walk' before reset\(\)"):
        loop.step(actions(0))
    loop.reset(KEY), ref.reset(KEY)
    with pytest.raises(ActionError, match=r"Invalid action for 'test/Walk': 4 at index \(1,\) is outside \[0, 4\)"):
        loop.step(np.array([1, 4, 1], np.int32))
    np.testing.assert_array_equal(loop.step(actions(1)).obs, ref.step(actions(1)).obs)  # as if never asked
    env.close()
    with pytest.raises(ClosedEnvironmentError, match=r"step\(\) called on environment 'test/Walk' after close"):
        loop.step(actions(0))
    with pytest.raises(ClosedEnvironmentError, match=r"host_loop\(\) called on environment 'test/Walk' after close"):
        env.host_loop()
    twin.close()


def test_a_wrapped_or_jax_native_env_has_no_loop():
    env = Walk(num_envs=3)
    assert RecordEpisodeStatistics(env).host_loop() is None  # a wrapper changes the steps: drive it compiled
    assert Corridor().host_loop() is None
    env.close()
