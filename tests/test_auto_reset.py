"""The auto-reset scheme an env picks (envhub.native.auto_reset): spares on a CPU; on a GPU or TPU, for a backend
whose reset is cheap, a branch-free reset of every env on every step (gymnax's own scheme); TimeLimit follows the
inner env's rule; a copy for an export whose library restarts episodes restarts nothing."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envhub import spaces
from envhub.native import auto_reset
from envhub.plugin import JaxEnvironment, JaxStep
from envhub.wrappers import TimeLimit

N = 6


class Counter(JaxEnvironment):
    """Counts up from a random start in [0, 1); the episode ends when the count reaches 3."""

    def __init__(self, **kwargs: Any):
        super().__init__(observation_space=spaces.Box(0.0, 10.0, ()), action_space=spaces.Discrete(2), **kwargs)

    def _reset_one(self, key: jax.Array) -> tuple[Any, Any]:
        x = jax.random.uniform(key)
        return x, x

    def _step_one(self, key: jax.Array, x: Any, action: Any) -> JaxStep:
        x = x + 1.0
        return JaxStep(state=x, obs=x, reward=jnp.float32(1.0), terminated=x >= 3.0, truncated=False, info={})


class CheapCounter(Counter):
    cheap_reset = True


@pytest.fixture
def accelerator(monkeypatch):
    monkeypatch.setattr(auto_reset, "on_accelerator", lambda: True)


def has_branch(env: Any) -> bool:
    state, _ = env.init(jax.random.key(0))
    return "cond[" in str(jax.make_jaxpr(env.step)(jax.random.key(1), state, jnp.zeros(N, jnp.int32)))


def test_on_a_cpu_every_backend_keeps_spares():
    assert CheapCounter(num_envs=N).reset_spares and Counter(num_envs=N).reset_spares


def test_on_an_accelerator_a_cheap_reset_runs_every_step_without_a_branch(accelerator):
    cheap = CheapCounter(num_envs=N)
    assert not cheap.reset_spares and cheap.init(jax.random.key(0))[0].spares is None
    assert not has_branch(cheap)
    assert Counter(num_envs=N).reset_spares and has_branch(Counter(num_envs=N))  # a reset of unknown cost: spares
    assert CheapCounter(num_envs=N, reset_spares=True).reset_spares  # asked for


def test_branch_free_resets_restart_exactly_the_finished_envs(accelerator):
    env = CheapCounter(num_envs=N)
    state, ts = env.init(jax.random.key(0))
    step = jax.jit(env.step)
    for i in range(7):
        before = np.asarray(state.env)
        state, ts = step(jax.random.key(i), state, jnp.zeros(N, jnp.int32))
        done = np.asarray(ts.done)
        np.testing.assert_array_equal(done, before + 1.0 >= 3.0)
        np.testing.assert_allclose(np.asarray(ts.final_obs), before + 1.0)
        np.testing.assert_allclose(np.asarray(ts.obs)[~done], before[~done] + 1.0)  # the others keep stepping
        restarted = np.asarray(ts.obs)[done]
        assert ((restarted >= 0) & (restarted < 1)).all() and len(set(restarted.tolist())) == done.sum()
        np.testing.assert_array_equal(np.asarray(state.steps)[done], 0)


def test_each_setting_gets_its_scheme():
    assert [Counter(num_envs=N, **kw).reset_strategy.scheme for kw in ({}, {"reset_spares": False})] == [
        "spares",
        "on_step",
    ]
    assert Counter(num_envs=N, reset_mode="cached").reset_strategy.scheme == "cached"
    assert Counter().reset_strategy.scheme == "on_step"  # one env: a branch, no spares
    assert set(auto_reset.SCHEMES) == {"cached", "spares", "on_step", "every_step", "caller"}
    assert all(f'``"{scheme}"``' in auto_reset.__doc__ for scheme in auto_reset.SCHEMES)  # the docstring lists each


def test_on_an_accelerator_time_limit_restarts_a_cheap_env_without_a_branch(accelerator):
    env = TimeLimit(CheapCounter(num_envs=N), 2)
    assert not has_branch(env)
    state, ts = env.init(jax.random.key(0))
    state, ts = env.step(jax.random.key(1), state, jnp.zeros(N, jnp.int32))
    half = jnp.arange(N) % 2 == 0
    state, ts = env.reset(jax.random.key(2), state, where=half)  # the even envs' episodes start again
    before = np.asarray(state.env_state.env)
    state, ts = jax.jit(env.step)(jax.random.key(3), state, jnp.zeros(N, jnp.int32))
    cut = ~np.asarray(half)  # the odd envs reach the limit of 2 steps, the even ones are 1 step in
    np.testing.assert_array_equal(np.asarray(ts.truncated), cut)
    np.testing.assert_array_equal(np.asarray(ts.terminated), False)
    np.testing.assert_allclose(np.asarray(ts.final_obs), before + 1.0)
    np.testing.assert_allclose(np.asarray(ts.obs)[~cut], before[~cut] + 1.0)  # not cut: untouched
    restarted = np.asarray(ts.obs)[cut]
    assert ((restarted >= 0) & (restarted < 1)).all() and len(set(restarted.tolist())) == cut.sum()
    np.testing.assert_array_equal(np.asarray(state.wrapper_state), np.where(cut, 0, 1))


def test_on_a_cpu_time_limit_restarts_behind_a_branch():
    assert has_branch(TimeLimit(Counter(num_envs=N, reset_spares=False), 2))


def test_a_hosts_reset_mask_skips_the_envs_the_last_step_restarted():
    asked, ended = np.array([True, True, False, False]), np.array([True, False, True, False])
    np.testing.assert_array_equal(auto_reset.still_to_restart(asked, ended), [False, True, False, False])


def test_a_copy_leaving_restarts_to_its_caller_restarts_nothing_and_leaves_the_env_as_it_was():
    env = TimeLimit(Counter(num_envs=N, reset_spares=False), 2)
    copied = auto_reset.leaving_restarts(env)
    assert copied.reset_strategy.scheme == "caller" and env.reset_strategy.scheme == "on_step"
    assert type(copied) is TimeLimit and copied.max_steps == 2 and copied.env is not env.env
    assert not has_branch(copied)  # nothing to restart: no branch either
    state, ts = copied.init(jax.random.key(0))
    before = np.asarray(state.env_state.env)
    for i in range(3):
        state, ts = copied.step(jax.random.key(i), state, jnp.zeros(N, jnp.int32))
        if i == 1:  # the time limit cuts every episode: nobody restarts
            assert ts.truncated.all()
            np.testing.assert_allclose(np.asarray(ts.obs), before + 2.0)
            np.testing.assert_array_equal(ts.obs, ts.final_obs)
    np.testing.assert_allclose(np.asarray(ts.obs), before + 3.0)  # stepped on, the episodes go on from their ends
    assert ts.terminated.all()  # ... to the count of 3
    state, ts = env.init(jax.random.key(0))  # the env it copies still restarts in the step
    for i in range(2):
        state, ts = env.step(jax.random.key(i), state, jnp.zeros(N, jnp.int32))
    assert ts.truncated.all() and (np.asarray(ts.obs) < 1.0).all()
    env.close()
    assert copied.closed  # closing the env closes its copy


def test_an_env_not_built_on_jax_environment_comes_back_as_it_is():
    from envhub.testing.toy_envs import Corridor

    env = TimeLimit(Corridor(), 3)
    assert auto_reset.leaving_restarts(env) is env
