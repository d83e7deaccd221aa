"""compattoy's own tests: the conformance kit and what its author checks, as envhub 0.1.0's docs describe them."""

import json
import os
import subprocess
import sysconfig

import jax
import jax.numpy as jnp
import pytest

import envhub
from envhub import testing


class TestCounter(testing.ConformanceTests):
    env_id = "compattoy/Counter-v0"  # the options come from the registered check_options
    option_overrides = {"num_steps": 30, "export": False}  # a short rollout; no export round trip


def test_make_runs_a_jitted_batch_to_the_end_of_its_episodes():
    with envhub.make("compattoy/Counter-v0", size=3, num_envs=2) as env:
        state, ts = env.init(jax.random.key(0))
        assert ts.obs.shape == (2, 1) and ts.reward.dtype == jnp.float32
        step = jax.jit(env.step)
        ended = jnp.zeros(2, bool)
        for i in range(3):  # counting from below 3, every episode ends within three steps of action 1
            state, ts = step(jax.random.key(i), state, jnp.ones(2, jnp.int32))
            assert (ts.reward == ts.terminated).all() and not ts.truncated.any()
            assert (jnp.where(ts.terminated, ts.final_obs[:, 0] == 3, ts.final_obs[:, 0] == ts.obs[:, 0])).all()
            assert (ts.obs[:, 0] < 3).all()
            ended = ended | ts.terminated
        assert ended.all()


def test_make_refuses_an_undeclared_kwarg():
    with pytest.raises(envhub.EnvKwargsError, match="sise"):
        envhub.make("compattoy/Counter-v0", sise=3)


def test_a_bad_size_is_the_factorys_value_error():
    try:
        envhub.make("compattoy/Counter-v0", size=0)
    except ValueError as exc:
        assert "size" in str(exc)
    else:
        pytest.fail("make(size=0) did not raise ValueError")


def test_envhub_list_json_shows_the_plugin():
    command = os.path.join(sysconfig.get_path("scripts"), "envhub")
    listed = subprocess.run([command, "list", "--json"], capture_output=True, text=True, check=True)
    row = next(row for row in json.loads(listed.stdout) if row["prefix"] == "compattoy")
    assert row["distribution"] == "envhub-compat-toy" and row["version"] == "0.1.0"
    assert row["status"] == "ok" and row["api"] == 1 and row["reason"] == ""
