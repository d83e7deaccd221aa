"""The whole conformance suite for this backend: a few lines; and that make() checks its kwargs."""

import pytest

import envhub
from envhub import testing


class TestChain(testing.ConformanceTests):
    env_id = "mybackend/Chain-v0"


class TestBatchedChain(testing.ConformanceTests):
    env_id = "mybackend/Chain-v0"
    make_kwargs = {"num_envs": 4}


def test_make_checks_the_declared_kwargs():
    assert envhub.make("mybackend/Chain-v0", length=5, slip=0, max_episode_steps=9).max_episode_steps == 9
    assert envhub.make("mybackend/Chain-v0", num_envs=2, reset_mode="cached").reset_mode == "cached"  # jax_kwargs
    with pytest.raises(envhub.EnvKwargsError, match=r"lenght=5 \(did you mean 'length'\?\).* accepts length: int = 8"):
        envhub.make("mybackend/Chain-v0", lenght=5)
    with pytest.raises(envhub.EnvKwargsError, match=r"slip='high' \(str\) is not float"):
        envhub.make("mybackend/Chain-v0", slip="high")
