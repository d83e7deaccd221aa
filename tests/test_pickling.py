"""Pickling envs (rebuilt by id in the receiving process) and the warning on fork after JAX started."""

import os
import pickle
import warnings

import jax
import numpy as np
import pytest

import envhub
from envhub import interop
from envhub.errors import ForkAfterJaxWarning, PicklingUnsupportedError
from envhub.wrappers import RecordEpisodeStatistics, TimeLimit

# one cheap id per backend: make only, nothing compiled
IDS = {
    "gymnax": ("gymnax/CartPole-v1", {"max_steps_in_episode": 7}),
    "gymnasium": ("gymnasium/CartPole-v1", {"max_episode_steps": 7}),
    "envpool": ("envpool/CartPole-v1", {}),
    "brax": ("brax/fast", {"episode_length": 7}),
}


@pytest.mark.parametrize("prefix", [pytest.param(p, marks=pytest.mark.requires_plugin(p)) for p in sorted(IDS)])
def test_made_env_and_its_wrappers_pickle_by_id(prefix):
    env_id, kwargs = IDS[prefix]
    env = RecordEpisodeStatistics(TimeLimit(envhub.make(env_id, num_envs=2, **kwargs), max_steps=5))
    back = pickle.loads(pickle.dumps(env))
    assert type(back) is RecordEpisodeStatistics and back.env.max_steps == 5
    assert back.id == env_id and back.num_envs == 2 and back.unwrapped is not env.unwrapped
    inner = back.env.env
    assert inner.__dict__["_envhub_made"] == env.env.env.__dict__["_envhub_made"]


def test_exports_pickle_and_step_after_loading():
    env = interop.to_gymnasium(envhub.make("gymnax/CartPole-v1"), seed=3)
    back = pickle.loads(pickle.dumps(env))
    np.testing.assert_array_equal(back.reset(seed=1)[0], env.reset(seed=1)[0])
    assert back.step(0)[0].flags.writeable
    venv = interop.to_gymnasium_vector(envhub.make("gymnax/CartPole-v1", num_envs=2), autoreset_mode="SameStep")
    vback = pickle.loads(pickle.dumps(venv))
    assert vback.metadata["autoreset_mode"] == venv.metadata["autoreset_mode"] and vback.reset(seed=0)[0].shape == (
        2,
        4,
    )


def test_gymnasium_backed_export_pickles():
    pytest.importorskip("envhub_gymnasium")
    env = interop.to_gymnasium(envhub.make("gymnasium/CartPole-v1"))
    back = pickle.loads(pickle.dumps(env))
    back.reset(seed=0)
    obs, *_ = back.step(back.action_space.sample())
    assert back.observation_space.contains(obs) and back._host is not None  # stepped directly, no JAX


def test_env_not_built_by_make_is_refused_with_the_fix():
    from envhub.testing.toy_envs import Corridor

    with pytest.raises(PicklingUnsupportedError, match="envhub.make did not build it.*envhub.make\\(id"):
        pickle.dumps(Corridor(length=3))


def test_fork_after_jax_started_warns_with_the_fix():
    jax.numpy.zeros(1).block_until_ready()  # JAX has started its backend
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    ours = [w for w in caught if issubclass(w.category, ForkAfterJaxWarning)]
    assert len(ours) == 1 and "forkserver" in str(ours[0].message) and "start_method" in str(ours[0].message)


def test_async_vector_env_with_forkserver_steps_exports():
    gymnasium = pytest.importorskip("gymnasium")

    def make():
        return interop.to_gymnasium(envhub.make("gymnax/CartPole-v1", max_steps_in_episode=3))

    venv = gymnasium.vector.AsyncVectorEnv([make, make], context="forkserver")
    try:
        venv.reset(seed=0)
        for _ in range(4):
            obs, reward, terminated, truncated, _ = venv.step(np.array([0, 1]))
        assert obs.shape == (2, 4) and (reward >= 0).all()
    finally:
        venv.close()
