import gc
import importlib.util
import subprocess
import sys
import textwrap
import warnings

import envpool
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from envhub_envpool import AsyncEnvpool
from envhub_envpool.environment import EnvpoolState

import envhub
from envhub import testing
from envhub.plugin import (
    ClosedEnvironmentError,
    HostState,
    HostVmapError,
    InvalidArgumentError,
    StaleStateError,
    key_to_seeds,
)

warnings.filterwarnings("ignore", module="gymnasium")
KEY = jax.random.key(0)


# --- the conformance kit ----------------------------------------------------------------------------
# The kit's eager loops init outside jit (the XLA fast path) and its jitted rollouts init inside jit
# (the host bridge), so its `jit` check also proves the two paths give identical trajectories.


class TestCartPole(testing.ConformanceTests):
    env_id = "envpool/CartPole-v1"


class TestCartPoleBatched(testing.ConformanceTests):
    env_id = "envpool/CartPole-v1"
    make_kwargs = {"num_envs": 3}


class TestPongBatched(testing.ConformanceTests):  # Atari: slow, so short episodes and few steps
    env_id = "envpool/Pong-v5"
    make_kwargs = {"num_envs": 2}
    options = testing.Options(time_limit_kwarg="max_episode_steps", time_limit=5, num_steps=20)


# --- ground truth: envpool stepped directly, its next-step reset translated -------------------------


def reference(task, n, seeds, actions, **kwargs):
    """The same spare-environment translation, written plainly over envpool's Python API (sync pool of 2n)."""
    pool = envpool.make(
        task, env_type="gymnasium", num_envs=2 * n, env_seed=[int(s) & 0x7FFFFFFF for s in seeds], **kwargs
    )
    obs0, _ = pool.reset()
    first = {p: obs0[p] for p in range(n, 2 * n)}  # fresh spares and their first obs
    active = list(range(n))
    out = []
    for a in actions:
        obs, reward, term, trunc, _ = pool.step(np.asarray(a, np.int32), np.asarray(active, np.int32))
        done = term | trunc
        if done.sum() > len(first):
            busy = {p for p, d in zip(active, done) if not d}
            pending = [p for p in range(2 * n) if p not in first and p not in busy][:n]
            robs, *_ = pool.step(np.zeros(n, np.int32), np.asarray(pending, np.int32))
            for p, o in zip(pending, robs):
                first[p] = o  # envpool's reset step: its action ignored, never shown to the user
        step_obs = obs.copy()
        for i in np.flatnonzero(done):
            spare = min(first)
            step_obs[i] = first.pop(spare)
            active[i] = spare
        out.append((step_obs, reward, term & ~(trunc & ~term), trunc & ~term, obs))
    pool.close()
    return obs0[:n], out


@pytest.mark.parametrize("fast_path", [True, False])
@pytest.mark.parametrize(
    ("task", "n", "steps", "kwargs"),
    [("CartPole-v1", 4, 200, {}), ("Pong-v5", 2, 30, {"max_episode_steps": 12})],
)
def test_matches_envpool_stepped_directly(task, n, steps, kwargs, fast_path):
    num_actions = 2 if task == "CartPole-v1" else 6
    actions = np.asarray(jax.random.randint(jax.random.key(1), (steps, n), 0, num_actions), np.int32)
    env = envhub.make(f"envpool/{task}", num_envs=n, fast_path=fast_path, **kwargs)
    state, first = env.init(KEY)
    assert isinstance(state, EnvpoolState if fast_path else HostState)
    step = jax.jit(env.step)
    got = []
    for a in actions:
        state, ts = step(KEY, state, a)
        got.append(jax.tree.map(np.asarray, ts))
    env.close()
    obs0, want = reference(task, n, key_to_seeds(KEY, 2 * n), actions, **kwargs)
    np.testing.assert_array_equal(first.obs, obs0)
    ends = 0
    for t, (ts, (obs, reward, terminated, truncated, final_obs)) in enumerate(zip(got, want)):
        for name, value in [
            ("obs", obs),
            ("reward", reward),
            ("terminated", terminated),
            ("truncated", truncated),
            ("final_obs", final_obs),
        ]:
            np.testing.assert_array_equal(getattr(ts, name), value, err_msg=f"{name} at step {t}")
        ends += int(ts.done.sum())
    assert ends >= n  # episodes ended, so the reset translation was compared


def test_fast_path_and_host_bridge_give_the_same_trajectory():
    def run(fast_path):
        with envhub.make("envpool/CartPole-v1", num_envs=8, fast_path=fast_path) as env:
            state, _ = env.init(KEY)
            return scan_rollout(env, state, 300)

    fast, host = run(True), run(False)
    for a, b in zip(jax.tree.leaves(fast), jax.tree.leaves(host)):
        np.testing.assert_array_equal(a, b)
    assert fast.done.sum() > 50  # many spares consumed: refills happened


def scan_rollout(env, state, steps):
    def body(state, key):
        return env.step(key, state, env.action_space.sample(key))

    return jax.jit(lambda s: jax.lax.scan(body, s, jax.random.split(KEY, steps))[1])(state)


def test_no_ignored_action_step_reaches_the_user():
    """Pushing right always: every CartPole episode is a run of identical-action steps ending in termination,
    and the step after an episode ends already moves the cart (envpool's own next step would be a reset)."""
    with envhub.make("envpool/CartPole-v1", num_envs=4) as env:
        state, _ = env.init(KEY)
        steps = jax.jit(lambda s: jax.lax.scan(lambda s, _: env.step(KEY, s, jnp.ones(4, jnp.int32)), s, None, 100))(
            state
        )[1]
    done = np.asarray(steps.done)
    assert done.sum() >= 8 and not np.asarray(steps.truncated).any()
    assert (np.asarray(steps.reward) == 1.0).all()  # envpool's reset steps (reward 0) never appear
    velocity = np.asarray(steps.obs)[..., 1]
    moved = np.diff(velocity, axis=0)[done[:-1]]  # the step after each end: a real push right
    assert (moved > 0).all()


def test_atari_time_limit_truncates_at_exactly_the_limit():
    with envhub.make("envpool/Pong-v5", num_envs=2, max_episode_steps=6) as env:
        state, first = env.init(KEY)
        truncated, terminated, elapsed = [], [], []
        for _ in range(13):
            state, ts = env.step(KEY, state, jnp.zeros(2, jnp.int32))
            truncated.append(np.asarray(ts.truncated))
            terminated.append(np.asarray(ts.terminated))
            elapsed.append(np.asarray(ts.info["elapsed_step"]))
    truncated = np.stack(truncated)
    assert truncated[:, 0].tolist() == [t % 6 == 5 for t in range(13)] and (truncated[:, 0] == truncated[:, 1]).all()
    assert not np.stack(terminated).any()
    assert np.stack(elapsed)[:, 0].tolist() == [1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1]
    assert first.obs.shape == (2, 4, 84, 84) and first.obs.dtype == jnp.uint8


# --- keys, stale states, close, vmap --------------------------------------------------------------


@pytest.mark.parametrize("fast_path", [True, False])
def test_same_key_same_trajectory_different_key_different(fast_path):
    def run(key):
        with envhub.make("envpool/CartPole-v1", num_envs=2, fast_path=fast_path) as env:
            state, _ = env.init(key)
            return scan_rollout(env, state, 40)

    a, b, c = run(jax.random.key(1)), run(jax.random.key(1)), run(jax.random.key(2))
    assert all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))
    assert not np.array_equal(a.obs, c.obs)


def test_stale_state_raises_on_the_fast_path_eagerly_and_under_jit():
    env = envhub.make("envpool/CartPole-v1", num_envs=2)
    old, _ = env.init(KEY)
    new, _ = env.step(KEY, old, jnp.zeros(2, jnp.int32))
    with pytest.raises(StaleStateError, match=r"state from step 0, but its newest state is from step 1"):
        env.step(KEY, old, jnp.zeros(2, jnp.int32))
    with pytest.raises(StaleStateError, match="cannot branch or rewind"):
        env.reset(KEY, old)
    step = jax.jit(env.step)
    with pytest.raises(
        jax.errors.JaxRuntimeError, match=r"StaleStateError: .*state from step 0.*Always pass the state"
    ):
        jax.block_until_ready(step(KEY, old, jnp.zeros(2, jnp.int32)))
    # The refused call consumed the pool's counter (a JAX Ref); the refusal revived it: the newest
    # state still steps, eagerly and through the same jitted function, and the stale one is still refused.
    newer, _ = env.step(KEY, new, jnp.zeros(2, jnp.int32))
    newest, _ = step(KEY, newer, jnp.zeros(2, jnp.int32))
    assert int(newest.version[0]) == 3
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"StaleStateError: .*state from step 1"):
        jax.block_until_ready(step(KEY, new, jnp.zeros(2, jnp.int32)))
    assert int(step(KEY, newest, jnp.zeros(2, jnp.int32))[0].version[0]) == 4
    state, _ = env.init(KEY)
    state, _ = step(KEY, state, jnp.zeros(2, jnp.int32))
    state, _ = jax.jit(env.reset)(KEY, state)
    state, _ = step(KEY, state, jnp.zeros(2, jnp.int32))
    assert int(state.version[0]) == 3
    env.close()


def test_stale_state_raises_on_the_host_bridge():
    env = envhub.make("envpool/CartPole-v1", fast_path=False)
    old, _ = env.init(KEY)
    env.step(KEY, old, 0)
    with pytest.raises(StaleStateError, match="newest state is from step 1"):
        env.step(KEY, old, 1)
    env.close()


def test_close_frees_the_pools_and_compiled_steps_refuse_to_run():
    env = envhub.make("envpool/CartPole-v1", num_envs=2)
    state, _ = env.init(KEY)
    host_state, _ = jax.jit(env.init)(KEY)  # inside jit: the host bridge
    step = jax.jit(env.step)
    state, _ = step(KEY, state, jnp.zeros(2, jnp.int32))
    assert env.live_host_envs() == 2
    env.close()
    assert env.live_host_envs() == 0
    with pytest.raises(
        ClosedEnvironmentError, match=r"step\(\) called on environment 'envpool/CartPole-v1' after close"
    ):
        env.step(KEY, state, jnp.zeros(2, jnp.int32))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"ClosedEnvironmentError: step\(\) called on environment"):
        jax.block_until_ready(step(KEY, state, jnp.zeros(2, jnp.int32)))  # compiled before close: no crash


def test_vmap_over_actions_of_one_fast_state_names_num_envs():
    with envhub.make("envpool/CartPole-v1") as env:
        state, _ = env.init(KEY)
        assert isinstance(state, EnvpoolState)
        with pytest.raises(HostVmapError, match=r"num_envs=N"):
            jax.vmap(lambda a: env.step(KEY, state, a))(jnp.array([0, 1], jnp.int32))


def test_vmap_over_a_fast_state_raises_the_documented_error():
    """A pool follows one trajectory per env: mapping its state (eagerly or under jit) is refused by vmap's rule."""
    with envhub.make("envpool/CartPole-v1", num_envs=2) as env:
        state, _ = env.init(KEY)
        stacked = jax.tree.map(lambda x: jnp.stack([x, x]), state)
        mapped = jax.vmap(lambda s: env.step(KEY, s, jnp.zeros(2, jnp.int32)))
        for run in (mapped, jax.jit(mapped)):
            with pytest.raises(HostVmapError, match=r"jax\.vmap maps the state of step\(\) of an envpool pool"):
                run(stacked)
        with pytest.raises(HostVmapError, match=r"maps the state of reset\(\)"):
            jax.vmap(lambda s: env.reset(KEY, s))(stacked)
        state, ts = env.step(KEY, state, jnp.zeros(2, jnp.int32))  # the pool is untouched and still steps
        assert ts.obs.shape == (2, 4)


def test_vmap_over_init_gives_one_pool_per_key():
    env = envhub.make("envpool/CartPole-v1")
    keys = jax.random.split(KEY, 3)

    def run(key):
        state, _ = env.init(key)
        return jax.lax.scan(lambda s, a: env.step(key, s, a), state, jnp.array([0, 1, 1], jnp.int32))[1].obs

    mapped = jax.jit(jax.vmap(run))(keys)
    for i in range(3):
        np.testing.assert_array_equal(mapped[i], jax.jit(run)(keys[i]))
    env.close()


def test_reset_where_resets_only_the_masked_envs():
    with envhub.make("envpool/CartPole-v1", num_envs=3) as env:
        state, _ = env.init(KEY)
        for _ in range(3):
            state, ts = env.step(KEY, state, jnp.ones(3, jnp.int32))
        state, reset_ts = env.reset(KEY, state, where=jnp.array([True, False, True]))
        elapsed = env.step(KEY, state, jnp.ones(3, jnp.int32))[1].info["elapsed_step"]
    assert elapsed.tolist() == [1, 4, 1]
    assert np.abs(np.asarray(reset_ts.obs)[[0, 2]]).max() <= 0.05  # CartPole's fresh start


# --- tasks, dtypes, kwargs, import --------------------------------------------------------------------


def test_every_envpool_task_is_listed():
    listed = {s.name for s in envhub.list_envs("envpool")}
    assert set(envpool.list_all_envs()) == listed
    assert {"CartPole-v1", "Pong-v5", "Breakout-v5", "Ant-v4", "HalfCheetah-v4"} <= listed


def test_float64_mujoco_is_float32_and_uses_the_host_bridge():
    with envhub.make("envpool/HalfCheetah-v4", num_envs=2) as env:
        assert not env.fast_path and "64-bit" in env.metadata["fast_path_reason"]
        state, ts = env.init(KEY)
        state, ts = env.step(KEY, state, jnp.zeros((2, 6), jnp.float32))
    assert ts.obs.dtype == jnp.float32 and ts.obs.shape == (2, 17)
    assert env.single_action_space.dtype == np.float32


def test_envpool_options_pass_through():
    with envhub.make("envpool/Pong-v5", stack_num=2, img_height=42, img_width=42, reward_clip=True) as env:
        assert env.single_observation_space.shape == (2, 42, 42)
        state, ts = env.init(KEY)
        assert ts.obs.shape == (2, 42, 42)
    with pytest.raises(envhub.EnvKwargsError, match="seed=3 is refused: envhub sets it"):
        envhub.make("envpool/CartPole-v1", seed=3)


SHIM = textwrap.dedent(
    """
    import sys, importlib.abc

    class Broken(importlib.abc.MetaPathFinder):  # an old envpool whose XLA template breaks on this jax
        def find_spec(self, name, path, target=None):
            if name == "envpool.python.xla_template":  # not an ImportError: old envpool did not catch it
                raise RuntimeError("envpool.python.xla_template: jax.abstract_arrays was removed (simulated)")

    sys.meta_path.insert(0, Broken())
    import jax, numpy as np, envhub
    from envhub_envpool import _shim
    envpool = _shim.import_envpool()
    assert getattr(sys.modules["envpool.python.xla_template"], "__envhub_stub__", False)
    env = envhub.make("envpool/CartPole-v1", num_envs=2)
    assert not env.fast_path and "stubbed" in env.metadata["fast_path_reason"], env.metadata
    state, ts = env.init(jax.random.key(0))
    assert type(state).__name__ == "HostState"
    for _ in range(30):
        state, ts = jax.jit(env.step)(jax.random.key(0), state, np.ones(2, np.int32))
    print("DONE", int(ts.info["elapsed_step"].sum()), [b.reason for b in envhub.list_backends() if b.prefix == "envpool"][0])
    """
)


def test_shim_path_when_the_xla_template_breaks():
    out = subprocess.run([sys.executable, "-c", SHIM], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("DONE") and "XLA path is unavailable" in line and "host bridge" in line


def test_import_envhub_and_list_do_not_import_envpool():
    code = "import envhub, sys; envhub.list_backends(); print('envpool' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# --- the async actor loop ---------------------------------------------------------------------------


def test_async_loop_returns_each_env_exactly_once_per_send():
    num_envs, batch = 8, 3
    with AsyncEnvpool("CartPole-v1", num_envs=num_envs, batch_size=batch) as pool:

        def body(carry, key):
            handle, outstanding = carry
            handle, ts = pool.recv(handle)
            ids = ts.info["env_id"]
            # every returned env had exactly one outstanding send (init counts as one)
            ok = (outstanding[ids] == 1).all() & (jnp.unique(ids, size=batch).size == batch)
            outstanding = outstanding.at[ids].add(-1)
            handle = pool.send(handle, jax.random.randint(key, (batch,), 0, 2, jnp.int32), ids)
            return (handle, outstanding.at[ids].add(1)), (ok, ts)

        handle = pool.init(KEY)
        carry = (handle, jnp.ones(num_envs, jnp.int32))
        (_, outstanding), (ok, ts) = jax.jit(lambda c: jax.lax.scan(body, c, jax.random.split(KEY, 400)))(carry)
    assert np.asarray(ok).all() and (np.asarray(outstanding) == 1).all()
    done = np.asarray(ts.done)
    assert done.sum() > 20
    # same-step reset: where an episode ended, obs is a new episode's start and final_obs the end
    assert (np.abs(np.asarray(ts.obs)[done]).max(axis=-1) <= 0.05).all()
    final = np.asarray(ts.final_obs)[np.asarray(ts.terminated)]  # the state that ended it: pole or cart out
    assert len(final) and ((np.abs(final[:, 0]) > 2.4) | (np.abs(final[:, 2]) > 0.2094)).all()
    ids = np.asarray(ts.info["env_id"]).ravel()
    later = np.ones_like(ids, bool)
    later[[np.flatnonzero(ids == e)[0] for e in range(num_envs)]] = False  # each env's first row: its init
    assert (np.asarray(ts.reward).ravel()[later] == 1.0).all()  # no hidden reset row (reward 0) reaches the user
    counts = np.bincount(np.asarray(ts.info["env_id"]).ravel(), minlength=num_envs)
    assert counts.sum() == 400 * batch and counts.min() > 0


def test_async_pool_checks_its_sizes():
    with pytest.raises(InvalidArgumentError, match=r"num_envs >= 2 \* batch_size - 1"):
        AsyncEnvpool("CartPole-v1", num_envs=4, batch_size=3)
    with pytest.raises(InvalidArgumentError, match=r"env_seed=\[1\] for .*envhub sets it: seeds come from the key"):
        AsyncEnvpool("CartPole-v1", num_envs=4, batch_size=2, env_seed=[1])  # a key envhub sets itself


# --- more tasks people run, and rendering ----------------------------------------------------------


class TestBreakout(testing.ConformanceTests):  # a second Atari game, unbatched
    env_id = "envpool/Breakout-v5"


class TestHalfCheetah(testing.ConformanceTests):  # MuJoCo: float64 specs, so the host bridge
    env_id = "envpool/HalfCheetah-v4"


def test_atari_renders_the_env_each_logical_env_plays_in():
    with envhub.make("envpool/Pong-v5", num_envs=2) as env:
        state, _ = env.init(KEY)
        assert isinstance(state, EnvpoolState)
        new, _ = jax.jit(env.step)(KEY, state, jnp.zeros(2, jnp.int32))
        frames = env.render(new)
        assert frames.shape == (2, 210, 160, 3) and frames.dtype == np.uint8 and frames.var() > 0
        np.testing.assert_array_equal(env.render(new, index=1), frames[1])
        with pytest.raises(StaleStateError, match="given a state from step 0, but its newest state is from step 1"):
            env.render(state)
    with pytest.raises(ClosedEnvironmentError):
        env.render(new)


def test_mujoco_renders_through_the_host_bridge():
    if importlib.util.find_spec("mujoco") is None:  # not imported here: envhub picks EGL before mujoco loads
        pytest.skip('MuJoCo frames need an OpenGL context from mujoco: pip install "envhub-envpool[mujoco-render]"')
    with envhub.make("envpool/HalfCheetah-v4", num_envs=2) as env:
        state, _ = env.init(KEY)
        assert isinstance(state, HostState)
        frames = env.render(state)
        assert frames.shape[0] == 2 and frames.shape[-1] == 3 and frames.var() > 0


def test_eager_fast_path_compiles_nothing_per_step_or_per_env_and_keeps_rss_flat():
    """Eager make/init/step/close cycles: no compile after the first cycles, RSS flat (issue: <= 20 MB per 1,000)."""
    import jax.monitoring

    compiles: list[str] = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda name, _secs, **_: compiles.append(name) if name == "/jax/core/compile/backend_compile_duration" else None
    )

    def rss_mb() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    action = jnp.zeros(16, jnp.int32)
    for cycle in range(40):
        if cycle == 10:  # warmed up: eager helpers compiled once
            base_compiles, base_rss = len(compiles), rss_mb()
        env = envhub.make("envpool/CartPole-v1", num_envs=16)
        state, _ = env.init(jax.random.key(cycle))
        assert isinstance(state, EnvpoolState)
        for _ in range(3):
            state, ts = env.step(KEY, state, action)
        assert int(state.version[0]) == 3 and ts.obs.shape == (16, 4)
        env.close()
    gc.collect()
    assert len(compiles) == base_compiles, compiles[base_compiles:]
    assert rss_mb() - base_rss < 5.0  # 30 cycles; the benchmark runs 1,000


def test_rows_out_of_logical_order_move_in_place_once_and_read_only_arrays_are_copied():
    from envhub_envpool.spares import in_logical_order

    pool_ids = np.array([4, 1, 5], np.int32)  # logical env i plays in envpool env pool_ids[i] (of 2 * 3)
    eid = np.array([5, 1, 4], np.int32)  # recv's rows: envpool env 5 first, then 1, then 4
    obs = np.arange(6).reshape(3, 2) + 10 * eid[:, None]  # row r carries its envpool env's id
    frozen = eid.astype(np.float32)
    frozen.flags.writeable = False
    out_obs, out_alias, out_frozen = in_logical_order(pool_ids, eid, (obs, obs, frozen))
    want = np.arange(6).reshape(3, 2)[[2, 1, 0]] + 10 * pool_ids[:, None]
    assert out_obs is obs and np.array_equal(obs, want)  # moved within recv's array
    assert out_alias is obs  # one array in two places is permuted once, not back
    assert out_frozen is not frozen and np.array_equal(out_frozen, pool_ids) and np.array_equal(frozen, eid)
    assert in_logical_order(pool_ids, pool_ids, (obs,))[0] is obs  # in order: untouched


@pytest.mark.parametrize("task", ["Pong-v5", "HalfCheetah-v4"])
def test_the_wire_takes_the_plain_path_and_gives_envpools_own_rows(task):
    from envhub_envpool.layout import Layout
    from envhub_envpool.wire import Wire

    lay = Layout.of(f"envpool/{task}", envpool.make_spec(task), 2)
    pools = [envpool.make(task, env_type="gymnasium", num_envs=2, seed=3) for _ in range(2)]  # sync: rows by id
    plain, public = Wire(pools[0], lay), Wire(pools[1], lay)
    assert plain.plain is not None  # the plain path applies to single-player tasks: this test checks it
    public.plain = None  # envpool's own send and recv
    ids = np.arange(2, dtype=np.int32)
    rng = np.random.default_rng(0)
    try:
        for pool in pools:
            pool.async_reset()
            pool.recv()
        for _ in range(5):
            action = rng.integers(0, 2, (2, *lay.action_space.shape)).astype(lay.action_dtype)
            plain.send(action, ids)
            public.send(action, ids)
            got, want = plain.recv(), public.recv()
            assert jax.tree.structure(got) == jax.tree.structure(want)
            for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
                assert a.dtype == b.dtype and np.array_equal(a, b)
    finally:
        for pool in pools:
            pool.close()
