"""The whole conformance suite for this backend: a few lines."""

from envhub import testing


class TestChain(testing.ConformanceTests):
    env_id = "mybackend/Chain-v0"


class TestBatchedChain(testing.ConformanceTests):
    env_id = "mybackend/Chain-v0"
    make_kwargs = {"num_envs": 4}
