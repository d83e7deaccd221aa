"""envhub-playground: ground truth against raw MuJoCo Playground, the kit on one env, a smoke test on every id.

Every MJX trace takes seconds and every compile tens of seconds on a shared 2-core CPU, so the tests
share one jitted side-by-side run (a module fixture) of PendulumSwingup, the cheapest env to trace.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

with contextlib.redirect_stdout(sys.stderr):
    from brax.envs.wrappers.training import EpisodeWrapper  # what playground's training wrapper uses
    from mujoco_playground import dm_control_suite, locomotion, manipulation, registry
    from mujoco_playground._src import mjx_env

from envhub_playground import listing

import envhub
from envhub import testing
from envhub.plugin import EnvKwargsError, EnvUnavailableError, InvalidArgumentError, select, spaces

ALL = envhub.list_envs("playground")
AVAILABLE = [s.name for s in ALL if s.available]
# Tracing one id's init and step takes 5-45 s on this shared 2-core CPU (CartpoleBalance: 26 s, humanoid:
# 45 s), so the smoke test traces them only with ENVHUB_PLAYGROUND_ALL=1 (the kit and the ground truth
# trace PendulumSwingup); every available id is still built: its model compiled by MuJoCo and put on
# the device by MJX, its spaces and time limit checked.
TRACED: set[str] = set()


class TestKitPendulumSwingup(testing.ConformanceTests):
    env_id = "playground/PendulumSwingup"
    make_kwargs = {"max_episode_steps": 40}


def test_every_playground_id_is_listed():
    assert sorted(s.name for s in ALL) == sorted(registry.ALL_ENVS)
    # The listing read from playground's sources is the registry itself (mujoco_playground is imported here).
    for suite, module in zip(listing.SUITES, (dm_control_suite, locomotion, manipulation)):
        assert listing._source_keys(listing._package() / "_src" / suite) == list(module.ALL_ENVS)
    assert listing.menagerie_path() == mjx_env.MENAGERIE_PATH
    assert set(AVAILABLE) >= set(dm_control_suite.ALL_ENVS)


def test_envhub_list_playground_imports_no_mujoco():
    code = (
        "import json, sys\nfrom envhub.cli import main\nmain(['list', 'playground', '--json'])\n"
        "print(json.dumps([m for m in ('mujoco', 'mujoco_playground', 'brax') if m in sys.modules]))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *listed, imported = run.stdout.strip().splitlines()
    assert json.loads(imported) == [] and len(json.loads("\n".join(listed))) == len(registry.ALL_ENVS)


@pytest.mark.parametrize("name", [s.name for s in ALL if not s.available])
def test_ids_needing_the_menagerie_are_unavailable_with_the_reason(name):
    with pytest.raises(EnvUnavailableError, match=r"needs MuJoCo Menagerie's robot models.*ensure_menagerie_exists"):
        envhub.make(f"playground/{name}")
    assert name in locomotion.ALL_ENVS or name in manipulation.ALL_ENVS
    assert not mjx_env.MENAGERIE_PATH.exists()


@pytest.mark.parametrize("name", AVAILABLE)
def test_smoke_every_available_id(name):
    env = envhub.make(f"playground/{name}", num_envs=2)
    raw = env.unwrapped.playground_env
    assert env.single_action_space == spaces.Box(-1.0, 1.0, (raw.action_size,))
    assert env.max_episode_steps == registry.get_default_config(name).episode_length and env.metadata["impl"] == "jax"
    if name not in TRACED and os.environ.get("ENVHUB_PLAYGROUND_ALL") != "1":
        pytest.skip("tracing init/step of every id takes minutes on this machine: set ENVHUB_PLAYGROUND_ALL=1")
    state, first = jax.eval_shape(env.init, jax.random.key(0))
    _, ts = jax.eval_shape(env.step, jax.random.key(1), state, jnp.zeros((2, raw.action_size)))
    assert ts.obs.shape == first.obs.shape == env.observation_space.shape
    assert set(ts.info) == set(first.info) and ts.terminated.dtype == jnp.bool_


# --- ground truth: envhub and raw playground side by side ----------------------------------------

NAME, LIMIT = "PendulumSwingup", 5
# Steps where both states get a NaN velocity, playground's one termination in the control suite (its
# `done` is "the physics diverged"): mid-episode, and on the step its time limit falls.
POISON = (6, 16)
STEPS = 18  # truncated at 4 and 11; terminated at 6 and at 16 (the 5th step of that episode)


def _poison(data, now):
    return data.replace(qvel=jnp.where(now, jnp.nan, data.qvel))


@pytest.fixture(scope="module")
def side_by_side():
    """envhub's steps and raw playground's (under brax's EpisodeWrapper, as playground's training
    wrapper does, without auto-reset) from the same state with the same actions; where the raw env is
    done it resets with the key envhub resets with (``split(step_key)[1]``)."""
    env = envhub.make(f"playground/{NAME}", max_episode_steps=LIMIT)
    raw = EpisodeWrapper(env.unwrapped.playground_env, LIMIT, 1)
    keys = jax.random.split(jax.random.key(1), STEPS)
    actions = jax.random.uniform(jax.random.key(2), (STEPS, 1), minval=-1.0, maxval=1.0)

    @jax.jit
    def run(key):
        state, first = env.init(key)
        raw_state = raw.reset(key)

        def body(carry, xs):
            state, raw_state = carry
            t, k, a = xs
            now = jnp.isin(t, jnp.array(POISON))
            state = dataclasses.replace(state, env=state.env.replace(data=_poison(state.env.data, now)))
            state, ts = env.step(k, state, a)
            reached = raw.step(raw_state.replace(data=_poison(raw_state.data, now)), a)
            fresh = raw.reset(jax.random.split(k)[1])
            raw_next = select(reached.done > 0, fresh, reached)
            return (state, raw_next), (ts, reached, raw_next.obs)

        _, out = jax.lax.scan(body, (state, raw_state), (jnp.arange(STEPS), keys, actions))
        return first, raw_state.obs, out

    return run(jax.random.key(0))


def test_trajectory_equals_playground_across_time_limit_and_termination(side_by_side):
    first, raw_first, (ts, reached, raw_obs) = side_by_side
    np.testing.assert_array_equal(first.obs, raw_first)
    np.testing.assert_allclose(ts.final_obs, reached.obs, rtol=1e-6)  # NaN where the physics diverged
    np.testing.assert_allclose(ts.obs, raw_obs, rtol=1e-6)  # after a reset: the new episode's first
    np.testing.assert_allclose(ts.reward, reached.reward, rtol=1e-6)
    truncation, done = np.asarray(reached.info["truncation"]) > 0, np.asarray(reached.done) > 0
    np.testing.assert_array_equal(ts.truncated, truncation)
    np.testing.assert_array_equal(ts.terminated, done & ~truncation)
    assert np.flatnonzero(np.asarray(ts.truncated)).tolist() == [4, 11]
    assert np.flatnonzero(np.asarray(ts.terminated)).tolist() == list(POISON)
    assert np.isnan(np.asarray(ts.final_obs)[list(POISON)]).any(axis=-1).all() and np.isfinite(ts.obs).all()


def test_terminated_wins_over_the_time_limit_on_the_same_step(side_by_side):
    _, _, (ts, reached, _) = side_by_side
    t = POISON[1]
    assert int(reached.info["steps"][t]) == LIMIT and float(reached.done[t]) == 1.0
    assert float(reached.info["truncation"][t]) == 0.0  # brax's EpisodeWrapper: 1 - done
    assert bool(ts.terminated[t]) and not bool(ts.truncated[t])


def test_metrics_are_the_info_and_kwargs_reach_the_config():
    env = envhub.make("playground/CartpoleBalance", ctrl_dt=0.02, config_overrides={"sim_dt": 0.005})
    assert env.unwrapped.config.ctrl_dt == 0.02 and env.unwrapped.playground_env.n_substeps == 4
    state, ts = jax.eval_shape(env.init, jax.random.key(0))  # traced, not compiled: seconds, not tens
    assert set(ts.info) == set(state.env.metrics) and "reward/upright" in ts.info
    assert envhub.make("playground/CartpoleBalance", episode_length=9).unwrapped.config.episode_length == 9


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"friction": 2.0}, r"unknown keyword argument friction=2.0; .* accepts impl: .*ctrl_dt: float"),
        (
            {"max_episode_steps": 0},
            r"max_episode_steps=0 \(playground's episode_length\) .*: use None \(no time limit\) or an int >= 1",
        ),
        ({"max_episode_steps": 5, "episode_length": 5}, r"pass only max_episode_steps"),
        ({"impl": "mujoco"}, r"impl='mujoco' \(str\) is not 'jax' \| 'warp'"),
        ({"action_repeat": 2}, r"action_repeat .* envhub.wrappers.ActionRepeat"),
        ({"reset_mode": "fresh"}, r"reset_mode='fresh' \(str\) is not 'real' \| 'cached'"),
    ],
)
def test_bad_arguments_say_what_to_do(kwargs, match):
    # names and types: EnvKwargsError before the factory runs; values: InvalidArgumentError from the plugin
    with pytest.raises((InvalidArgumentError, EnvKwargsError), match=match):
        envhub.make("playground/CartpoleBalance", **kwargs)


def test_dict_observations_become_tree_spaces():
    """Locomotion envs observe {"state": ..., "privileged_state": ...}: read with eval_shape, as a Tree of Boxes."""
    from types import SimpleNamespace
    from typing import Any, NamedTuple

    from envhub_playground.environment import PlaygroundEnvironment

    class State(NamedTuple):  # a pytree with playground State's `obs`
        obs: Any

    env = PlaygroundEnvironment.__new__(PlaygroundEnvironment)
    obs = {"state": jnp.zeros(3), "privileged_state": jnp.zeros((2, 4))}
    env.playground_env = SimpleNamespace(reset=lambda key: State(obs))
    box = lambda *shape: spaces.Box(-np.inf, np.inf, shape)  # noqa: E731
    assert env.single_observation_space == spaces.Tree({"state": box(3), "privileged_state": box(2, 4)})


# --- parameters as data (the kit's params check: per-env rows, one compile, varied rollouts differ) ----------


def test_params_are_written_into_the_mjx_model_and_bad_ones_refused():
    from envhub_playground.params import ModelParams, model_params, with_model

    env = envhub.make(f"playground/{NAME}", num_envs=2)
    raw = env.unwrapped.playground_env
    d = env.default_params
    assert {k: v.shape for k, v in d.items()} == {
        "gravity": (3,), "body_mass": (2,), "geom_friction": (4,), "actuator_gain": (1,)
    }
    params = ModelParams(raw.mjx_model, raw.mj_model)
    model = params.model(raw.mjx_model, {k: v * 2 + 1 for k, v in d.items()})
    np.testing.assert_allclose(model.opt.gravity, d["gravity"] * 2 + 1)
    np.testing.assert_allclose(model.body_mass, d["body_mass"] * 2 + 1)
    np.testing.assert_allclose(model.geom_friction[:, 0], d["geom_friction"] * 2 + 1)
    np.testing.assert_allclose(model.geom_friction[:, 1:], raw.mjx_model.geom_friction[:, 1:])
    np.testing.assert_allclose(model.actuator_gainprm[:, 0], d["actuator_gain"] * 2 + 1)
    copy = with_model(raw, model)
    assert copy.mjx_model is model and raw.mjx_model is not model  # the env itself is untouched
    assert model_params(object()) is None  # an env keeping no _mjx_model of its own has no params
    bad = r"params\['geom_friction'\] .* has the value -0.5; it must be >= 0.0"
    with pytest.raises(InvalidArgumentError, match=bad):
        env.init(jax.random.key(0), params={**d, "geom_friction": d["geom_friction"].at[0].set(-0.5)})
    with pytest.raises(InvalidArgumentError, match=r"params\['body_mass'\] .* shape \(3,\)"):
        env.reset(jax.random.key(0), None, params={**d, "body_mass": jnp.ones(3)})


def test_cheetah_makes_without_mujocos_settotalmass_notice_or_its_log_file(tmp_path, monkeypatch, capfd):
    """dm_control_suite's cheetah.xml sets ``settotalmass``, which MuJoCo 3.3+ deprecates: MuJoCo printed that on
    every make and appended it to MUJOCO_LOG.TXT in the working folder (``envhub_playground.importing.MUJOCO_NOTICES``,
    through ``envhub.plugin.mujoco_warnings_dropped``); the handler set before is back afterwards."""
    import mujoco

    monkeypatch.chdir(tmp_path)
    envhub.make("playground/CheetahRun")
    assert "settotalmass" not in capfd.readouterr().err and list(tmp_path.iterdir()) == []
    assert mujoco.get_mju_user_warning() is None
