"""envhub-brax: the conformance kit on inverted_pendulum, plus ground truth against raw brax.

Every brax compile costs seconds on CPU, so the tests share a few jitted rollouts (module-scoped
fixtures) and use inverted_pendulum with short episodes.
"""

from __future__ import annotations

import functools
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest

# isort: off
from envhub_brax import render_html  # before brax: it picks MuJoCo's headless OpenGL (EGL)
from brax import envs as brax_envs
from brax.envs.wrappers.training import EpisodeWrapper
from envhub_brax.params import SystemParams, with_system

# isort: on

import envhub
from envhub import testing
from envhub.plugin import EnvKwargsError, InvalidArgumentError, RenderError, no_spares, reset_from_spares, select
from envhub.wrappers import Wrapper

ENV = "brax/inverted_pendulum"
LIMIT = 10  # episode_length of the truncation tests; zero actions keep the pole up far longer


class JitEachCall(Wrapper):
    """Compiles each call made outside jit: brax run op by op takes seconds a step, and the env jits nothing itself."""

    def __init__(self, env):
        super().__init__(env)
        self._jitted = {"init": jax.jit(env.init), "reset": jax.jit(env.reset), "step": jax.jit(env.step)}

    def _init(self, key, params=None):
        return self._jitted["init"](key, params=params)

    def _reset(self, key, state, params=None):
        return self._jitted["reset"](key, state, params=params)

    def _step(self, key, state, action):
        return self._jitted["step"](key, state, action)


class TestInvertedPendulum(testing.ConformanceTests):
    env_id = ENV
    make_kwargs = {"max_episode_steps": 50}

    def make_env(self, **kwargs):
        # The kit's jit and vmap checks compare against eager calls; this keeps each one compiled.
        return JitEachCall(super().make_env(**kwargs))


def test_every_brax_env_is_listed_and_available():
    listed = {s.name: s for s in envhub.list_envs("brax")}
    assert sorted(listed) == sorted(brax_envs._envs)
    assert all(s.available for s in listed.values()), [n for n, s in listed.items() if not s.available]


# --- shared programs -------------------------------------------------------------------------
# Every brax program costs seconds to compile on CPU, so these tests share three, each called with
# other keys and actions of one shape: envhub's rollout with episode_length=LIMIT, raw brax's
# rollout (its time limit an argument) and raw brax's reset.

STEPS = 2 * LIMIT + 1  # two time limits, then one step more


def _rollout(env, key, actions):
    """init, then one step per action; returns (first ts, step keys, states after each step, step ts)."""
    init_key, run_key = jax.random.split(key)
    state, first = env.init(init_key)
    keys = jax.random.split(run_key, len(actions))

    def body(state, xs):
        state, ts = env.step(xs[0], state, xs[1])
        return state, (state, ts)

    _, (states, steps) = jax.lax.scan(body, state, (keys, actions))
    return first, keys, states, steps


@pytest.fixture(scope="module")
def pendulum():
    """envhub's inverted_pendulum with episode_length=LIMIT and its jitted ``_rollout``."""
    env = envhub.make(ENV, episode_length=LIMIT)
    return env, jax.jit(functools.partial(_rollout, env))


@pytest.fixture(scope="module")
def truncation_run(pendulum):
    env, rollout = pendulum
    return env, rollout(jax.random.key(0), jnp.zeros((STEPS, 1)))


@pytest.fixture(scope="module")
def raw_brax():
    """raw brax's inverted_pendulum: ``run(key, actions, episode_length)`` and ``reset_obs(key)``, both jitted.

    ``run`` steps under brax's EpisodeWrapper without auto-reset (what ``brax.envs.create`` builds
    with ``auto_reset=False``) from the reset with the same key as ``_rollout``'s init, and returns
    obs, reward, done, truncation. The wrapper only compares its time limit with the step count,
    so the limit can be a traced argument: one compile serves every limit.
    """
    base = brax_envs.get_environment("inverted_pendulum", backend="mjx")  # envhub-brax's default pipeline

    @jax.jit
    def run(key, actions, episode_length):
        raw = EpisodeWrapper(base, episode_length, action_repeat=1)

        def body(s, a):
            s = raw.step(s, a)
            return s, (s.obs, s.reward, s.done, s.info["truncation"])

        return jax.lax.scan(body, raw.reset(jax.random.split(key)[0]), actions)[1]

    return run, jax.jit(lambda key: base.reset(key).obs)


def test_time_limit_is_truncation_with_the_reached_obs(truncation_run, raw_brax):
    env, (first, keys, states, ts) = truncation_run
    _, reset_obs = raw_brax
    assert np.flatnonzero(np.asarray(ts.truncated)).tolist() == [LIMIT - 1, 2 * LIMIT - 1]
    assert not np.asarray(ts.terminated).any()
    assert np.asarray(states.steps).tolist() == list(range(1, LIMIT)) + [0] + list(range(1, LIMIT)) + [0, 1]
    # final_obs == obs except where the episode ended; there obs is a fresh reset with that step's
    # reset key (envhub.JaxEnvironment: split(key)[0] steps, split(key)[1] resets).
    ended = np.asarray(ts.done)
    np.testing.assert_array_equal(ts.final_obs[~ended], ts.obs[~ended])
    for t in np.flatnonzero(ended):
        np.testing.assert_allclose(ts.obs[t], reset_obs(jax.random.split(keys[t])[1]), rtol=1e-6)
        assert not np.allclose(ts.obs[t], ts.final_obs[t])


def test_consecutive_episodes_start_from_different_states(truncation_run):
    _, (first, _, _, ts) = truncation_run
    starts = [np.asarray(first.obs), np.asarray(ts.obs[LIMIT - 1]), np.asarray(ts.obs[2 * LIMIT - 1])]
    for a, b in [(0, 1), (1, 2), (0, 2)]:
        assert not np.allclose(starts[a], starts[b]), f"episodes {a} and {b} start from the same state"


def test_dynamics_equal_raw_brax_up_to_the_time_limit(truncation_run, raw_brax):
    _, (first, _, _, ts) = truncation_run
    run, _ = raw_brax
    obs, reward, done, truncation = run(jax.random.key(0), jnp.zeros((STEPS, 1)), LIMIT)
    end = LIMIT  # steps 0 .. LIMIT-1; raw brax does not reset, so only the first episode compares
    np.testing.assert_allclose(ts.final_obs[:end], obs[:end], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ts.reward[:end], reward[:end])
    np.testing.assert_array_equal(ts.truncated[:end], truncation[:end] > 0)
    np.testing.assert_array_equal(ts.done[:end], done[:end] > 0)  # raw brax: done=1 on the time limit too


def test_termination_dynamics_and_terminated_wins_over_the_time_limit(pendulum, raw_brax):
    """Hold still, then push the cart so the pole falls on step t = LIMIT-1, where the time limit falls too."""
    _, rollout = pendulum
    run, reset_obs = raw_brax
    key, actions = jax.random.key(1), jnp.zeros((STEPS, 1)).at[LIMIT - 2 :].set(1.0)
    obs, reward, done, truncation = run(key, actions, 1000)  # no time limit in reach: done is the fall
    t = int(np.flatnonzero(np.asarray(done))[0])
    assert t == LIMIT - 1 and not truncation[t], f"the pole fell at step {t}, not on the time limit"
    _, keys, _, ts = rollout(key, actions)
    # Up to and including the terminal step, envhub's trajectory is raw brax's.
    np.testing.assert_allclose(ts.final_obs[: t + 1], obs[: t + 1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ts.reward[: t + 1], reward[: t + 1])
    assert np.flatnonzero(np.asarray(ts.done)[: t + 1]).tolist() == [t]
    assert bool(ts.terminated[t]) and not bool(ts.truncated[t])  # the limit falls on that step too
    np.testing.assert_allclose(ts.obs[t], reset_obs(jax.random.split(keys[t])[1]), rtol=1e-6)


def test_cached_resets_restart_every_episode_from_the_first_state():
    env = envhub.make(ENV, episode_length=4, reset_mode="cached")
    first, _, _, ts = jax.jit(functools.partial(_rollout, env))(jax.random.key(2), jnp.zeros((9, 1)))
    assert np.flatnonzero(np.asarray(ts.truncated)).tolist() == [3, 7]
    for t in (3, 7):
        np.testing.assert_array_equal(ts.obs[t], first.obs)
        assert not np.allclose(ts.final_obs[t], first.obs)
    np.testing.assert_array_equal(ts.final_obs[3], ts.final_obs[7])  # the same episode, twice


@pytest.mark.parametrize("make_key", [jax.random.key, jax.random.PRNGKey], ids=["key", "PRNGKey"])
def test_batched_step_compiles_once_and_resets_each_env_with_its_own_key(make_key, raw_brax):
    num_envs, limit = 4, 3
    _, reset_obs = raw_brax
    env = envhub.make(ENV, episode_length=limit, num_envs=num_envs)
    traces = 0

    @jax.jit
    def step(key, state, action):
        nonlocal traces
        traces += 1
        return env.step(key, state, action)

    state, ts = jax.jit(env.init)(make_key(0))
    action = jnp.zeros((num_envs, 1))
    for i in range(2 * limit):  # crosses two auto-resets
        key = make_key(i + 1)
        state, ts = step(key, state, action)
        if i % limit == limit - 1:
            assert np.asarray(ts.truncated).all() and not np.asarray(ts.terminated).any()
            keys = jax.random.split(jax.random.split(key)[1], num_envs)  # a step resets with split(key)[1]
            if not jnp.issubdtype(keys.dtype, jax.dtypes.prng_key):  # PRNGKey's raw uint32 data
                keys = jax.random.wrap_key_data(keys)  # the same keys, so reset_obs's one compile serves
            fresh = np.stack([reset_obs(keys[j]) for j in range(num_envs)])
            np.testing.assert_allclose(ts.obs, fresh, rtol=1e-6)
            assert len({tuple(np.round(o, 7)) for o in np.asarray(ts.obs)}) == num_envs
        else:
            assert not np.asarray(ts.done).any()
    assert traces == 1, f"jit(step) traced {traces} times"
    assert ts.obs.shape == (num_envs, 4) and ts.reward.dtype == jnp.float32


def test_render_html_writes_brax_viewer(truncation_run, tmp_path):
    env, (_, _, states, _) = truncation_run
    path = tmp_path / "pendulum.html"
    page = render_html(env, states, path)
    assert path.read_text() == page and "<html" in page.lower() and len(page) > 1000


def test_kwargs_reach_brax_and_mjx_is_the_default_pipeline():
    assert envhub.make(ENV, backend="positional").unwrapped.brax_env.backend == "positional"
    ant = envhub.make("brax/ant", terminate_when_unhealthy=False)
    assert ant.unwrapped.brax_env.backend == "mjx" and ant.metadata["pipeline"] == "mjx"
    assert ant.unwrapped.brax_env._terminate_when_unhealthy is False
    assert ant.observation_space.shape == (27,) and ant.action_space.shape == (8,)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        # a wrong name or type: make() refuses it before brax runs, listing what the env accepts
        ({"backend": "physx"}, EnvKwargsError, r"backend='physx' \(str\) is not 'mjx' \| 'generalized' \|"),
        ({"max_episode_steps": 5, "episode_length": 5}, EnvKwargsError, r"pass only max_episode_steps"),
        ({"reset_mode": "fresh"}, EnvKwargsError, r"reset_mode='fresh' \(str\) is not 'real' \| 'cached'"),
        ({"action_repeat": 2}, EnvKwargsError, r"action_repeat=2 .* envhub.wrappers.ActionRepeat"),
        ({"reset_spares": 1, "num_envs": 2}, EnvKwargsError, r"reset_spares=1 \(int\) is not bool \| None"),
        # a value of the right type that the env cannot take
        (
            {"episode_length": 0},
            InvalidArgumentError,
            r"max_episode_steps=0 \(brax's episode_length\) .*: use None \(no time limit\) or an int >= 1",
        ),
        (
            {"reset_spares": True},
            InvalidArgumentError,
            r"reset_spares=True .* num_envs=N with reset_mode='real' only \(got num_envs=None",
        ),
        (
            {"reset_spares": True, "num_envs": 2, "reset_mode": "cached"},
            InvalidArgumentError,
            r"reset_spares=True .* \(got num_envs=2, reset_mode='cached'\): omit it",
        ),
    ],
)
def test_bad_arguments_say_what_to_do(kwargs, error, match):
    with pytest.raises(error, match=match):
        envhub.make(ENV, **kwargs)


@pytest.mark.parametrize(
    "name, match",
    [
        ("swimmer", r"backend='mjx' \(str\) is not 'generalized' \| None"),
        ("fast", r"backend='mjx' is refused: it has no physics pipeline: omit it"),
    ],
)
def test_a_pipeline_the_env_lacks_says_which_it_has(name, match):
    with pytest.raises(EnvKwargsError, match=match):
        envhub.make(f"brax/{name}", backend="mjx")


# --- real resets of a batch: every episode from its own initial state -------------------------------


@pytest.mark.parametrize("spares", [True, False], ids=["spares", "on-the-step"])
def test_batched_episodes_all_start_from_their_own_state(spares):
    """Random actions topple the pole after a few steps and episode_length=5 cuts the rest: many ends per step."""
    num_envs, steps = 8, 40
    env = envhub.make(ENV, num_envs=num_envs, episode_length=5, reset_spares=spares)

    @jax.jit
    def run(key):
        state, first = env.init(key)

        def body(state, key):
            action = jax.random.uniform(key, (num_envs, 1), minval=-1.0, maxval=1.0)
            state, ts = env.step(key, state, action)
            return state, (state.spares, ts)

        return first, jax.lax.scan(body, state, jax.random.split(key, steps))[1]

    first, (kept, ts) = run(jax.random.key(3))
    done = np.asarray(ts.done)
    starts = np.concatenate([np.asarray(first.obs), np.asarray(ts.obs)[done]])
    assert len(starts) > 3 * num_envs and done.sum(axis=1).max() > 2  # many episodes, several ending at once
    assert len({tuple(o) for o in starts.round(6)}) == len(starts), "two episodes started from the same state"
    assert not np.isclose(np.asarray(ts.obs)[done], np.asarray(ts.final_obs)[done]).all(axis=-1).any()
    if spares:  # every env has the default params: any spare suits any env, and all are refilled in one batched
        # reset only when a step needs more than are left (envhub.native.resets.reset_from_own_spares)
        era, made = np.asarray(kept.era).max(-1), np.asarray(kept.made)
        for t in range(1, steps):
            assert (era[t] > era[t - 1]) == (done[t].sum() > (made[t - 1] == era[t - 1]).sum()), t
        assert 1 < era[-1] < steps // 2, era  # refills happen, but not on every step where some env ends


def test_spares_are_never_handed_out_twice_even_when_rows_are_rolled_back():
    """reset_from_spares with a toy reset (a random id per key) and a wrapper that keeps some rows' old state."""
    num_envs = 6
    reset_fn = lambda key: jax.random.bits(key, dtype=jnp.uint32)  # noqa: E731

    @jax.jit
    def step(key, ids, spares):
        done_key, keep_key, reset_key = jax.random.split(key, 3)
        done = jax.random.bernoulli(done_key, 0.4, (num_envs,))
        new_ids, new_spares = reset_from_spares(reset_fn, reset_key, done, ids, spares)
        keep = jax.random.bernoulli(keep_key, 0.2, (num_envs,)) & ~done  # as ActionRepeat keeps ended envs
        rolled_back = select(keep, (ids, spares), (new_ids, new_spares))
        return rolled_back, jnp.where(done & ~keep, new_ids, 0)

    ids = jax.vmap(reset_fn)(jax.random.split(jax.random.key(0), num_envs))
    spares, seen = no_spares(ids), list(np.asarray(ids))
    for t in range(60):
        (ids, spares), started = step(jax.random.key(t + 1), ids, spares)
        seen += [int(i) for i in np.asarray(started) if i]
    assert len(seen) > 100 and len(set(seen)) == len(seen)


def test_swimmer_steps_through_its_fluid():
    """brax's fluid forces call jnp.clip(a_min=...), gone from jax: the plugin's scoped fix makes swimmer run."""
    import brax.fluid

    if "a_min" not in inspect.signature(jnp.clip).parameters:  # the fix is needed here: raw brax fails
        raw = brax_envs.get_environment("swimmer")
        with pytest.raises(TypeError, match="a_min"):
            jax.eval_shape(raw.step, jax.eval_shape(raw.reset, jax.random.key(0)), jnp.zeros(raw.action_size))
    env = envhub.make("brax/swimmer", episode_length=3)
    assert env.metadata["pipeline"] == "generalized"
    first, _, _, ts = jax.jit(functools.partial(_rollout, env))(jax.random.key(0), jnp.ones((4, 2)))
    assert brax.fluid.jp is jnp  # restored after tracing
    assert np.isfinite(np.asarray(ts.obs)).all() and np.asarray(ts.truncated).tolist() == [False, False, True, False]
    assert not np.allclose(ts.final_obs[1], first.obs)  # it moved


# --- rendering: MuJoCo's renderer where OpenGL is available, brax's HTML viewer always ------------


def test_render_draws_a_state_of_a_rollout(truncation_run):
    env, (_, _, states, _) = truncation_run
    assert env.render_modes == ("rgb_array", "html")
    try:
        frame = env.render(jax.tree.map(lambda x: x[3], states))
    except RenderError as exc:
        if "OpenGL" not in str(exc):
            raise
        pytest.skip(f"no OpenGL context on this machine: {exc}")
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8 and frame.var() > 0
    with pytest.raises(RenderError, match="the state is traced"):
        jax.jit(env.render)(jax.tree.map(lambda x: x[0], states))


def test_record_html_of_a_batched_env(tmp_path):
    # Cached resets: recording does not depend on the reset mode, and without a reset inside the
    # step, record's jitted rollout compiles in about two thirds of the time.
    env = envhub.make(ENV, episode_length=LIMIT, num_envs=2, reset_mode="cached")
    frames = envhub.record(
        env, lambda key, obs: jnp.zeros((2, 1)), jax.random.key(0), 3, tmp_path / "run.html", index=1
    )
    page = (tmp_path / "run.html").read_text()
    assert frames == 4 and "<html" in page.lower() and len(page) > 1000


# --- parameters as data (the kit's params check: per-env rows, one compile, varied rollouts differ) ----------


def test_params_are_written_where_every_pipeline_reads_them():
    """MJX's fields (mjx) and brax's own copies (generalized, positional, spring) get the same values."""
    raw = brax_envs.get_environment("inverted_pendulum", backend="mjx")
    sys = raw.sys
    params = SystemParams(sys)
    d = params.defaults
    assert {k: v.shape for k, v in d.items()} == {
        "gravity": (3,), "body_mass": (3,), "geom_friction": (3,), "actuator_gain": (1,)
    }
    new = params.system(sys, {k: v * 2 + 1 for k, v in d.items()})
    np.testing.assert_allclose(new.gravity, d["gravity"] * 2 + 1)
    np.testing.assert_allclose(new.opt.gravity, d["gravity"] * 2 + 1)
    np.testing.assert_allclose(new.body_mass, d["body_mass"] * 2 + 1)
    np.testing.assert_allclose(new.link.inertia.mass, (d["body_mass"] * 2 + 1)[1:])  # links: bodies but the world
    np.testing.assert_allclose(new.geom_friction[:, 0], d["geom_friction"] * 2 + 1)
    np.testing.assert_allclose(new.geom_friction[:, 1:], sys.geom_friction[:, 1:])
    np.testing.assert_allclose(new.actuator_gainprm[:, 0], d["actuator_gain"] * 2 + 1)
    np.testing.assert_allclose(new.actuator.gain, d["actuator_gain"] * 2 + 1)
    np.testing.assert_array_equal(new.actuator_biasprm, sys.actuator_biasprm)  # a motor: no servo bias to follow
    wrapped = EpisodeWrapper(raw, 5, 1)
    copy = with_system(wrapped, new)
    assert copy.env.sys is new and wrapped.env.sys is sys and raw.sys is sys  # the env itself is untouched


def test_bad_params_are_refused_naming_the_leaf_and_fast_has_none():
    env = envhub.make(ENV, num_envs=2)
    params = env.default_params
    assert env.params_bounds == envhub.plugin.Bounds(body_mass=(0.0, None), geom_friction=(0.0, None))
    with pytest.raises(InvalidArgumentError, match=r"params\['body_mass'\] .* has the value -1.0; it must be >= 0.0"):
        env.init(jax.random.key(0), params={**params, "body_mass": params["body_mass"].at[1].set(-1.0)})
    with pytest.raises(InvalidArgumentError, match=r"params\['gravity'\] .* has shape \(2,\)"):
        env.init(jax.random.key(0), params={**params, "gravity": jnp.zeros(2)})
    fast = envhub.make("brax/fast")
    assert fast.default_params is None
    with pytest.raises(InvalidArgumentError, match="has no parameters"):
        fast.init(jax.random.key(0), params={"gravity": jnp.zeros(3)})


def test_halfcheetah_makes_without_mujocos_settotalmass_notice_or_its_log_file(tmp_path, monkeypatch, capfd):
    """brax's halfcheetah.xml sets ``settotalmass``, which MuJoCo 3.3+ deprecates: MuJoCo printed that on every make
    and appended it to MUJOCO_LOG.TXT in the working folder. It is dropped (``envhub_brax.quiet.MUJOCO_NOTICES``);
    MuJoCo's other warnings still print, and the handler set before is back afterwards."""
    import mujoco
    from envhub_brax.quiet import mujoco_notices_dropped

    monkeypatch.chdir(tmp_path)
    envhub.make("brax/halfcheetah")
    assert capfd.readouterr() == ("", "") and list(tmp_path.iterdir()) == []
    assert mujoco.get_mju_user_warning() is None
    with mujoco_notices_dropped():
        mujoco.get_mju_user_warning()("another MuJoCo warning")
    assert capfd.readouterr().err == "WARNING: another MuJoCo warning\n"


def test_what_importing_brax_prints_goes_to_stderr_less_the_missing_warp_notice(capsys):
    """Without warp-lang (a brax-only install), importing brax imports mujoco.mjx, which printed "Failed to import
    warp" and "Failed to import mujoco_warp" on stdout on every run (tests/test_backends_quiet.py runs brax without
    warp); those two lines are dropped (``envhub_brax.quiet.PRINTED_NOTICES``), anything else printed goes to stderr."""
    from envhub_brax.quiet import prints_dropped

    with prints_dropped():
        print("Failed to import warp:", "No module named 'warp'")
        print("Failed to import mujoco_warp: No module named 'warp'\nother news")
        print("Failed to import warp: CUDA driver too old")  # an installed warp that fails still says why
    assert capsys.readouterr() == ("", "other news\nFailed to import warp: CUDA driver too old\n")
