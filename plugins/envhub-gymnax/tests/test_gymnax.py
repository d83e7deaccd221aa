"""envhub-gymnax: the conformance kit on every gymnax environment, plus ground truth against gymnax."""

from __future__ import annotations

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub import testing
from envhub.plugin import EnvUnavailableError, RenderError, spaces

ALL = envhub.list_envs("gymnax")
AVAILABLE = [s.id for s in ALL if s.available]


def test_every_gymnax_env_is_listed():
    assert sorted(s.name for s in ALL) == sorted(gymnax.registered_envs)
    assert len(AVAILABLE) == len(ALL) - 1


def _conformance_class(env_id: str) -> type:
    """One kit class per env: its checks share one probe, so each env's programs compile once."""
    name = "TestKit_" + "".join(c if c.isalnum() else "_" for c in env_id.split("/", 1)[1])
    return type(name, (testing.ConformanceTests,), {"env_id": env_id, "__module__": __name__})


for _env_id in AVAILABLE:  # every available gymnax env, each with the whole kit
    _cls = _conformance_class(_env_id)
    globals()[_cls.__name__] = _cls


class TestBatchedCartPole(testing.ConformanceTests):
    env_id = "gymnax/CartPole-v1"
    make_kwargs = {"num_envs": 3}


class TestBatchedBreakout(testing.ConformanceTests):
    env_id = "gymnax/Breakout-MinAtar"
    make_kwargs = {"num_envs": 2}


def test_our_id_table_is_gymnaxs_registry():
    """The plugin lists ``importing.ENVS`` and builds each env from its class's own module until gymnax is imported
    (tests/test_imports.py: CartPole then makes without matplotlib, seaborn or scipy): the table is gymnax's."""
    import importlib

    from envhub_gymnax import importing

    assert list(importing.ENVS) == gymnax.registered_envs[: len(importing.ENVS)]
    for name, where in importing.ENVS.items():
        module, _, attr = where.partition(":")
        assert (
            getattr(importlib.import_module(f"gymnax.environments.{module}"), attr)
            is gymnax.registration._registry[name]
        )
    assert importing.registered_envs() == gymnax.registered_envs  # gymnax imported: its registry answers
    env, params = importing.make("Catch-bsuite", rows=8)
    assert type(env) is type(gymnax.make("Catch-bsuite")[0]) and env.rows == 8 and params == env.default_params


def test_import_alone_runs_a_packages_init_only_when_asked_for_what_it_defines(tmp_path, monkeypatch):
    import sys

    from envhub_gymnax.importing import import_alone

    root = tmp_path / "deferred_pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("import deferred_pkg.heavy\nfrom deferred_pkg import sub\nVALUE = 1\n")
    (root / "heavy.py").write_text("")
    (root / "light.py").write_text("Y = 2\n")
    (root / "sub" / "__init__.py").write_text("import deferred_pkg.heavy\n")
    (root / "sub" / "leaf.py").write_text("from deferred_pkg import light\nX = light.Y\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert import_alone("deferred_pkg.sub.leaf").X == 2 and "deferred_pkg.heavy" not in sys.modules
        import deferred_pkg

        assert deferred_pkg.sub.leaf.X == 2 and "deferred_pkg.heavy" not in sys.modules  # modules: no __init__
        assert deferred_pkg.VALUE == 1 and "deferred_pkg.heavy" in sys.modules  # its own name: its __init__ ran
        assert "__getattr__" not in vars(deferred_pkg)
        with pytest.raises(AttributeError):
            deferred_pkg.nothing  # noqa: B018
    finally:
        for name in [m for m in sys.modules if m.partition(".")[0] == "deferred_pkg"]:
            del sys.modules[name]


def test_mnist_bandit_is_unavailable_with_the_reason():
    with pytest.raises(
        EnvUnavailableError, match="'gymnax/MNISTBandit-bsuite' is listed but unavailable here: .*downloads the MNIST"
    ):
        envhub.make("gymnax/MNISTBandit-bsuite")


def _rollout_with_states(env, key, actions):
    """Step env with fixed actions; return per-step (state before, step key, TimeStep)."""
    state, _ = env.init(key)
    keys = jax.random.split(jax.random.fold_in(key, 1), len(actions))

    def body(state, xs):
        k, a = xs
        new_state, ts = env.step(k, state, a)
        return new_state, (state, ts)

    _, (before, ts) = jax.jit(lambda s: jax.lax.scan(body, s, (keys, actions)))(state)
    return before, keys, ts


def _at(tree, t):
    return jax.tree.map(lambda x: x[t], tree)


def test_pendulum_time_limit_is_truncation_with_the_true_final_obs():
    env = envhub.make("gymnax/Pendulum-v1")
    raw, params = gymnax.make("Pendulum-v1")
    actions = jnp.zeros((201, 1), jnp.float32)
    before, keys, ts = _rollout_with_states(env, jax.random.key(0), actions)
    truncated, terminated = np.asarray(ts.truncated), np.asarray(ts.terminated)
    assert np.flatnonzero(truncated).tolist() == [199] and not terminated.any()  # step 200, 1-based
    step_key, reset_key = jax.random.split(keys[199])
    reached, *_ = raw.step_env(step_key, _at(before, 199).env, actions[199], params)
    first_obs, _ = raw.reset_env(reset_key, params)
    np.testing.assert_allclose(ts.final_obs[199], reached, rtol=1e-6)
    np.testing.assert_allclose(ts.obs[199], first_obs, rtol=1e-6)
    assert not np.allclose(ts.obs[199], ts.final_obs[199])
    np.testing.assert_array_equal(ts.final_obs[:199], ts.obs[:199])


def test_cartpole_termination_keeps_the_terminal_obs():
    env = envhub.make("gymnax/CartPole-v1")
    raw, params = gymnax.make("CartPole-v1")
    actions = jnp.ones(60, jnp.int32)  # always push right: falls within a few dozen steps
    before, keys, ts = _rollout_with_states(env, jax.random.key(1), actions)
    t = int(np.flatnonzero(np.asarray(ts.terminated))[0])
    assert not bool(ts.truncated[t]) and float(ts.reward[t]) == 1.0
    step_key, reset_key = jax.random.split(keys[t])
    reached, _, _, raw_terminated, _ = raw.step_env(step_key, _at(before, t).env, actions[t], params)
    assert bool(raw_terminated)
    np.testing.assert_allclose(ts.final_obs[t], reached, rtol=1e-6)
    np.testing.assert_allclose(ts.obs[t], raw.reset_env(reset_key, params)[0], rtol=1e-6)


def test_terminated_wins_when_the_time_limit_falls_on_a_terminal_step():
    key, actions = jax.random.key(1), jnp.ones(60, jnp.int32)
    _, _, ts = _rollout_with_states(envhub.make("gymnax/CartPole-v1"), key, actions)
    t = int(np.flatnonzero(np.asarray(ts.terminated))[0])
    limited = envhub.make("gymnax/CartPole-v1", max_steps_in_episode=t + 1)  # the limit hits on step t + 1 too
    before, keys, ts = _rollout_with_states(limited, key, actions)
    assert bool(ts.terminated[t]) and not bool(ts.truncated[t])
    raw = limited.unwrapped.gymnax_env  # gymnax itself reports both flags on that step
    *_, raw_terminated, raw_truncated, _ = raw.step(keys[t], _at(before, t).env, actions[t], limited.unwrapped.params)
    assert bool(raw_terminated) and bool(raw_truncated)


def test_max_episode_steps_is_the_time_limit_and_gymnax_name_an_alias():
    assert envhub.make("gymnax/CartPole-v1", max_episode_steps=9).unwrapped.params.max_steps_in_episode == 9
    with pytest.raises(envhub.EnvKwargsError, match="both given .*: pass only max_episode_steps"):
        envhub.make("gymnax/CartPole-v1", max_episode_steps=9, max_steps_in_episode=9)


def test_state_wraps_gymnax_state():
    state, _ = envhub.make("gymnax/CartPole-v1").init(jax.random.key(0))
    assert type(state.env).__name__ == "EnvState" and int(state.steps) == 0 and int(state.env.time) == 0


def test_deepsea_keeps_its_cumulative_metrics_across_resets_like_gymnax():
    env = envhub.make("gymnax/DeepSea-bsuite")
    raw, params = gymnax.make("DeepSea-bsuite")
    actions = jnp.zeros(40, jnp.int32)
    before, keys, ts = _rollout_with_states(env, jax.random.key(3), actions)
    assert int(ts.done.sum()) >= 3
    for t in np.flatnonzero(np.asarray(ts.done)):
        _, raw_next, *_ = raw.step(keys[t], _at(before, t).env, actions[t], params)
        ours = _at(before, t + 1).env if t + 1 < len(actions) else None
        if ours is not None:
            np.testing.assert_array_equal(ours.total_bad_episodes, raw_next.total_bad_episodes)
            np.testing.assert_allclose(ours.denoised_return, raw_next.denoised_return)


def test_kwargs_and_params_reach_gymnax():
    env = envhub.make("gymnax/CartPole-v1", max_steps_in_episode=8)
    assert env.unwrapped.params.max_steps_in_episode == 8
    bandit = envhub.make("gymnax/BernoulliBandit-misc", max_steps_in_episode=7)  # gymnax's default is 100.0
    assert isinstance(bandit.unwrapped.params.max_steps_in_episode, float)
    custom = gymnax.make("CartPole-v1")[1].replace(gravity=20.0)
    assert envhub.make("gymnax/CartPole-v1", params=custom).unwrapped.params.gravity == 20.0
    catch = envhub.make("gymnax/Catch-bsuite", rows=6)  # a constructor kwarg
    assert catch.observation_space.shape == (6, 5)
    assert envhub.make("gymnax/Catch-bsuite", rows=6, num_envs=2).init(jax.random.key(0))[1].obs.shape == (2, 6, 5)


def test_spaces_convert_with_dtypes():
    from envhub_gymnax.environment import to_envhub_space
    from gymnax.environments import spaces as gs

    tree = to_envhub_space(gs.Dict({"a": gs.Discrete(4), "b": gs.Tuple([gs.Box(-1.0, 1.0, (2,), jnp.float32)])}))
    assert tree == spaces.Tree({"a": spaces.Discrete(4), "b": (spaces.Box(-1.0, 1.0, (2,)),)})
    catch = envhub.make("gymnax/Catch-bsuite")  # gymnax declares int32, returns float32
    assert catch.observation_space.dtype == np.float32


def test_info_has_the_same_keys_at_init_and_step():
    env = envhub.make("gymnax/CartPole-v1")
    state, ts0 = env.init(jax.random.key(0))
    _, ts1 = env.step(jax.random.key(1), state, 0)
    assert set(ts0.info) == set(ts1.info) == {"discount"}


def test_deep_sea_keys_matter_when_gymnax_samples_the_action_map():
    """keys_matter=False for DeepSea is gymnax's default, not an envhub bug: sampling makes keys count."""
    spec = envhub.default_registry().spec("gymnax/DeepSea-bsuite")
    result = testing.run_check(
        "determinism",
        lambda **kw: envhub.make(spec.id, sample_action_map=True, **kw),
        testing.options_for(spec, keys_matter=True),
    )
    assert result.passed, result.message


# --- rendering: gymnax's own visualizer ------------------------------------------------------------


def test_render_classic_control_and_minatar_with_gymnax_visualizer():
    pytest.importorskip("pygame", reason='classic control draws with pygame: pip install "envhub-gymnax[render]"')
    env = envhub.make("gymnax/CartPole-v1")
    state, _ = env.init(jax.random.key(0))
    frame = env.render(state)
    assert frame.shape == (400, 600, 3) and frame.dtype == np.uint8 and frame.var() > 0
    step = jax.jit(env.step)
    moved = state
    for _ in range(8):  # always push right: the cart moves a few pixels
        moved, _ = step(jax.random.key(1), moved, 1)
    assert not np.array_equal(env.render(moved), frame)
    env.close()
    batched = envhub.make("gymnax/Breakout-MinAtar", num_envs=2)
    frames = batched.render(batched.init(jax.random.key(0))[0])
    assert frames.shape[0] == 2 and frames.shape[-1] == 3 and frames.var() > 0
    assert batched.render_modes == ("rgb_array",)


def test_env_without_a_drawing_says_so():
    env = envhub.make("gymnax/DeepSea-bsuite")
    assert env.render_modes == ()
    with pytest.raises(RenderError, match=r"gymnax's visualizer has no drawing for 'DeepSea-bsuite'"):
        env.render(env.init(jax.random.key(0))[0])


def test_batched_envs_restart_from_spares_and_take_the_jax_base_kwargs():
    env = envhub.make("gymnax/CartPole-v1", num_envs=8)
    assert isinstance(env, envhub.JaxEnvironment) and env.num_envs == 8 and env.reset_spares is True
    assert envhub.make("gymnax/CartPole-v1", num_envs=8, reset_spares=False).reset_spares is False
    assert envhub.make("gymnax/CartPole-v1", num_envs=8, reset_mode="cached").reset_spares is False
    # DeepSea's restart carries metrics over from the old state, so no spare can stand in for it
    assert envhub.make("gymnax/DeepSea-bsuite", num_envs=4).reset_spares is False


def test_batched_spares_and_on_the_step_resets_run_the_same_episodes_until_the_first_end():
    key = jax.random.key(5)
    actions = jnp.tile(jnp.array([0, 1, 1, 0, 1, 0, 0, 1], jnp.int32), (40, 1))

    def run(env):
        state, first = env.init(key)
        out = []
        for t, a in enumerate(actions):
            state, ts = env.step(jax.random.fold_in(key, t), state, a)
            out.append(ts)
        return first, jax.tree.map(lambda *x: np.stack(x), *out)

    (first_a, a), (first_b, b) = (
        run(envhub.make("gymnax/CartPole-v1", num_envs=8, reset_spares=s)) for s in (True, False)
    )
    np.testing.assert_array_equal(first_a.obs, first_b.obs)
    end = int(np.argmax(a.done.any(axis=1)))  # the first step on which some env ends
    assert a.done.any() and end > 0
    np.testing.assert_allclose(a.obs[:end], b.obs[:end])
    np.testing.assert_allclose(a.final_obs[: end + 1], b.final_obs[: end + 1])
    # after the end, the envs that ended start from other (spare) states; those that did not are unchanged
    ended = a.done[end]
    assert not np.allclose(a.obs[end][ended], b.obs[end][ended])
    np.testing.assert_allclose(a.obs[end][~ended], b.obs[end][~ended])
