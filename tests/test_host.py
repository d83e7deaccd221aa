"""The host bridge, on a tiny NumPy vector env (no gymnasium needed); every test runs on both callbacks."""

import gc
import time
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envhub import spaces, testing
from envhub.errors import ClosedEnvironmentError, HostEnvError, HostVmapError, InvalidArgumentError, StaleStateError
from envhub.host import callback as host_callback
from envhub.host.environment import HostEnvironment, HostState, HostStep

KEY = jax.random.key(0)


@pytest.fixture(autouse=True, params=host_callback.KINDS)
def callback_kind(request, monkeypatch):
    """Run the test with traced host calls on ``buffer_callback``, then on the ordered ``io_callback``."""
    if request.param == "buffer_callback" and host_callback.buffer_callback is None:
        pytest.skip(f"jax {jax.__version__} has no buffer_callback (jax >= 0.6.2): only the io_callback path applies")
    if request.param == "io_callback" and not host_callback.IO_CALLBACK_LOWERS:
        pytest.skip(f"jax {jax.__version__} cannot compile an ordered io_callback (jax >= 0.7): only buffer_callback applies")
    monkeypatch.setattr(host_callback, "kind", request.param)
    return request.param


def test_the_bridge_uses_the_chosen_callback(callback_kind):
    env = Walk(num_envs=2)
    env.validate_actions = False  # the action check's own callback (on its invalid branch) is not the bridge's
    state, _ = env.init(KEY)
    text = str(jax.jit(env.step).lower(KEY, state, jnp.zeros(2, jnp.int32)).as_text())
    target = {"buffer_callback": "xla_buffer_python_cpu_callback", "io_callback": "xla_ffi_python_cpu_callback"}
    assert f"@{target[callback_kind]}" in text and len([t for t in target.values() if f"@{t}" in text]) == 1
    env.close()


def test_host_callback_kind_from_the_environment(monkeypatch):
    monkeypatch.setenv("ENVHUB_HOST_CALLBACK", "io_callback")
    monkeypatch.setattr(host_callback, "IO_CALLBACK_LOWERS", True)
    assert host_callback.default_kind() == "io_callback"
    monkeypatch.setattr(host_callback, "IO_CALLBACK_LOWERS", False)  # jax 0.6
    with pytest.raises(InvalidArgumentError, match=r"io_callback needs jax >= 0.7 .*unset it to use buffer_callback"):
        host_callback.default_kind()
    monkeypatch.setenv("ENVHUB_HOST_CALLBACK", "pure_callback")
    with pytest.raises(ValueError, match="ENVHUB_HOST_CALLBACK='pure_callback' is not one of"):
        host_callback.default_kind()
    monkeypatch.setenv("ENVHUB_HOST_CALLBACK", "buffer_callback")
    monkeypatch.setattr(host_callback, "buffer_callback", None)  # a jax without it
    with pytest.raises(
        InvalidArgumentError, match=r"buffer_callback needs jax >= 0.6.2 .*ENVHUB_HOST_CALLBACK=io_callback"
    ):
        host_callback.default_kind()
    monkeypatch.undo()
    monkeypatch.delenv("ENVHUB_HOST_CALLBACK", raising=False)
    assert host_callback.default_kind() == ("buffer_callback" if host_callback.buffer_callback else "io_callback")


class VecWalk:
    """``n`` walkers on 0..5: action 1 steps right, 0 left; 5 terminates, ``max_steps`` truncates."""

    def __init__(self, n, max_steps, closed):
        self.n, self.max_steps, self.closed = n, max_steps, closed

    def reset(self, seeds):
        self.rngs = [np.random.default_rng(s) for s in seeds]
        self.pos = np.array([r.integers(0, 3) for r in self.rngs])
        self.t = np.zeros(self.n, np.int64)
        return self.pos[:, None].astype(np.float64), {"t": self.t.copy()}

    def step(self, action):
        if np.any(action == 3):
            raise ValueError("action 3 breaks the walker")
        self.pos = np.clip(self.pos + 2 * np.asarray(action) - 1, 0, 5)
        self.t += 1
        terminated, truncated = self.pos >= 5, self.t >= self.max_steps  # both can be set: envhub resolves
        final = self.pos[:, None].astype(np.float64)
        for i in np.flatnonzero(terminated | truncated):
            self.pos[i], self.t[i] = self.rngs[i].integers(0, 3), 0
        return HostStep(
            obs=self.pos[:, None].astype(np.float64),
            reward=terminated * 1.0,
            terminated=terminated,
            truncated=truncated,
            final_obs=final,
            info={"t": self.t.copy()},
        )

    def close(self):
        self.closed.append(self)


class Walk(HostEnvironment):
    def __init__(self, num_envs=None, max_steps=20):
        super().__init__(
            num_envs,
            observation_space=spaces.Box(0.0, 5.0, (1,)),
            action_space=spaces.Discrete(4),
            info_spec={"t": jax.ShapeDtypeStruct((), jnp.int32)},
        )
        self.id = "test/Walk"
        self.max_steps, self.closed_hosts = max_steps, []

    def _host_make(self):
        return VecWalk(self._n, self.max_steps, self.closed_hosts)

    def _host_reset(self, host, seeds):
        return host.reset(seeds)

    def _host_step(self, host, action):
        return host.step(action)


OPTIONS = testing.Options(time_limit_kwarg="max_steps")


@pytest.mark.parametrize("num_envs", [None, 3])
def test_walk_passes_the_conformance_kit(num_envs):
    # Action 3 raises by design; the kit samples actions from the space, so offer it 0..2 only.
    class SafeWalk(Walk):
        @property
        def single_action_space(self):
            return spaces.Discrete(3)

    results = testing.run_checks(lambda **kw: SafeWalk(num_envs=num_envs, **kw), OPTIONS)
    assert not any(r.failed for r in results), testing.format_report(results)


def test_state_is_a_small_pytree_and_outputs_are_cast():
    env = Walk(num_envs=2)
    state, ts = env.init(KEY)
    assert isinstance(state, HostState) and state.handle.dtype == jnp.int32 and state.version.shape == (2,)
    assert ts.obs.dtype == jnp.float32 and ts.info["t"].dtype == jnp.int32  # float64/int64 from the host
    env.close()


def test_terminated_wins_when_both_flags_come_from_the_host():
    env = Walk(max_steps=3)  # from cell 2, three steps right reach 5 exactly at the time limit
    key = next(k for k in jax.random.split(KEY, 50) if float(env.init(k)[1].obs[0]) == 2.0)
    state, _ = env.init(key)
    for _ in range(3):
        state, ts = env.step(KEY, state, 1)
    assert bool(ts.terminated) and not bool(ts.truncated)
    np.testing.assert_array_equal(ts.final_obs, [5.0])
    env.close()


def test_eager_and_jitted_steps_raise_stale_state():
    env = Walk()
    old, _ = env.init(KEY)
    new, _ = env.step(KEY, old, 1)
    with pytest.raises(
        StaleStateError, match=r"'test/Walk' was given a state from step 0, but its newest state is from step 1"
    ):
        env.step(KEY, old, 1)
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"StaleStateError: .*cannot branch or rewind"):
        jax.block_until_ready(jax.jit(env.step)(KEY, old, 1))
    assert int(jax.jit(env.step)(KEY, new, 1)[0].version) == 2
    env.close()


@pytest.mark.requires_plugin("gymnax")
def test_a_state_of_the_wrong_kind_is_the_invalid_argument_error_a_jax_env_raises():
    """None, another env's JaxState or the (state, ts) pair: the class ``step`` of a JAX env raises, eager and in jit."""
    import envhub

    env, cartpole = Walk(), envhub.make("gymnax/CartPole-v1")
    state, ts = env.init(KEY)
    jax_state = cartpole.init(KEY)[0]
    for bad, got, fix in [
        (None, "NoneType", "pass the state returned by the previous call"),
        (jax_state, "JaxState", "pass the state returned by the previous call"),
        ((state, ts), r"a \(state, ts\) pair", "pass its first item"),
    ]:
        match = rf"^'test/Walk' needs the HostState returned by init/reset/step, got {got}; {fix}\."
        for call in (env.step, jax.jit(env.step)):
            with pytest.raises(InvalidArgumentError, match=match):
                call(KEY, bad, 1)
        with pytest.raises(InvalidArgumentError, match=match):
            env.reset(KEY, bad)
    with pytest.raises(InvalidArgumentError, match=r"takes one of its own states \(a JaxState\), not a value of type"):
        cartpole.step(KEY, None, 1)  # the JAX env: the same class
    assert int(env.step(KEY, state, 1)[0].version) == 1  # the refusals left the state usable
    env.close()


def test_backend_exception_names_env_and_original_error():
    env = Walk()
    state, _ = env.init(KEY)
    with pytest.raises(
        HostEnvError,
        match=r"'test/Walk' raised in step\(\): ValueError: action 3 breaks the walker\. "
        r"The host environment is now in an unknown state",
    ):
        env.step(KEY, state, 3)
    with pytest.raises(
        jax.errors.JaxRuntimeError,
        match=r"HostEnvError: Environment 'test/Walk' raised in step\(\): "
        r"ValueError: action 3 breaks the walker",
    ):
        jax.block_until_ready(jax.jit(env.step)(KEY, state, 3))
    env.close()


def test_host_step_is_a_named_structure():
    """``_host_step`` returns a ``HostStep``; the old positional tuple is refused with the fix."""

    class Positional(Walk):
        def _host_step(self, host, action):
            s = host.step(action)  # the old positional contract: a plain tuple
            return (s.obs, s.reward, s.terminated, s.truncated, s.final_obs, s.info)

    env = Positional()
    state, _ = env.init(KEY)
    with pytest.raises(HostEnvError, match=r"Positional\._host_step returned tuple, not a HostStep"):
        env.step(KEY, state, 1)
    env.close()


def test_spaces_must_be_declared():
    class Undeclared(Walk):
        def __init__(self):
            HostEnvironment.__init__(self, None)
            self.id = "test/Undeclared"

    with pytest.raises(TypeError, match=r"Undeclared must pass observation_space= to its base class.s __init__"):
        _ = Undeclared().observation_space


def test_two_threads_stepping_one_state_one_is_stale():
    import threading

    class SlowWalk(Walk):
        def _host_step(self, host, action):
            time.sleep(0.01)  # wide enough for the other thread to arrive mid-step
            return super()._host_step(host, action)

    env = SlowWalk()
    state, _ = env.init(KEY)
    outcomes = []

    def step():
        try:
            env.step(KEY, state, 1)
            outcomes.append("ok")
        except StaleStateError:
            outcomes.append("stale")

    threads = [threading.Thread(target=step) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok", "stale"]
    env.close()


def test_vmap_routes_every_mapped_state_to_its_own_host_env():
    env = Walk()
    keys = jax.random.split(KEY, 4)
    actions = jnp.array([[1, 1, 1], [0, 0, 0], [1, 0, 1], [0, 1, 1]], jnp.int32)

    def run(key, acts):
        state, first = env.init(key)
        state, steps = jax.lax.scan(lambda s, a: env.step(key, s, a), state, acts)
        return first.obs, steps.obs

    mapped = jax.jit(jax.vmap(run))(keys, actions)
    assert env.live_host_envs() == 4
    for i in range(4):
        single = jax.jit(run)(keys[i], actions[i])
        for m, s in zip(mapped, single):
            np.testing.assert_array_equal(m[i], s)
    nested = jax.jit(jax.vmap(jax.vmap(run)))(keys.reshape(2, 2), actions.reshape(2, 2, 3))
    np.testing.assert_array_equal(nested[1].reshape(4, 3, 1), mapped[1])
    env.close()


def test_vmap_of_a_batched_env_and_of_reset():
    env = Walk(num_envs=2)
    keys = jax.random.split(KEY, 3)
    states, ts = jax.vmap(env.init)(keys)
    assert ts.obs.shape == (3, 2, 1) and states.handle.shape == (3, 2)
    states, ts = jax.jit(jax.vmap(env.step, in_axes=(None, 0, None)))(KEY, states, jnp.array([1, 0], jnp.int32))
    states, ts = jax.vmap(env.reset, in_axes=(None, 0))(KEY, states)  # one key for all: same starts
    assert np.all(ts.obs == ts.obs[0])
    env.close()


def test_vmap_over_actions_of_one_state_is_refused_naming_num_envs():
    env = Walk()
    state, _ = env.init(KEY)
    with pytest.raises(
        HostVmapError,
        match=r"'test/Walk' is a host environment and jax.vmap maps the action or key of "
        r"step\(\) over 2 values but not the state.*num_envs=N",
    ):
        jax.vmap(lambda a: env.step(KEY, state, a))(jnp.array([0, 1], jnp.int32))
    with pytest.raises(HostVmapError, match="num_envs"):
        jax.vmap(lambda k: env.reset(k, state))(jax.random.split(KEY, 2))
    env.close()


def test_close_frees_every_host_env_and_is_final():
    env = Walk()
    state, _ = env.init(KEY)
    env.init(KEY)
    step = jax.jit(env.step)
    step(KEY, state, 1)
    assert env.live_host_envs() == 2
    env.close()
    assert env.live_host_envs() == 0 and len(env.closed_hosts) == 2
    with pytest.raises(ClosedEnvironmentError, match=r"step\(\) called on environment 'test/Walk' after close\(\)"):
        env.step(KEY, state, 1)
    with pytest.raises(
        jax.errors.JaxRuntimeError, match=r"ClosedEnvironmentError: step\(\) called on environment 'test/Walk'"
    ):
        jax.block_until_ready(step(KEY, state, 1))


def run_and_drop():
    """Make an env, run a jitted rollout on it, drop both; return a weak ref and its closed-host list."""
    env = Walk()

    @jax.jit
    def rollout(key):
        state, _ = env.init(key)
        return jax.lax.scan(lambda s, _: env.step(key, s, 1), state, None, length=3)

    jax.block_until_ready(rollout(KEY))
    return weakref.ref(env), env.closed_hosts


def test_compiled_functions_do_not_keep_the_env_alive_and_gc_closes_it():
    ref, closed = run_and_drop()
    gc.collect()
    assert ref() is None
    assert len(closed) == 1  # closed by the finalizer, not leaked


def test_a_reused_trace_of_a_closed_env_explains_itself():
    env = Walk()

    def run(key):
        return env.init(key)[1].obs

    jax.jit(run)(KEY)
    env.close()
    env = Walk()  # jax.jit(run) below reuses the trace that names the first env
    with pytest.raises(
        jax.errors.JaxRuntimeError,
        match=r"traced with environment 'test/Walk', which has since been "
        r"closed or garbage-collected; jax.jit reuses the trace",
    ):
        jax.block_until_ready(jax.jit(run)(KEY))
    env.close()
