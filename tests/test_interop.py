"""envhub envs as gymnasium envs (checked by gymnasium's own checker) and users' gymnax objects."""

import subprocess
import sys

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envhub
from envhub import interop, spaces


def test_envhub_interop_needs_no_import_of_its_own_and_import_envhub_does_not_load_it():
    code = (
        "import sys, envhub\n"
        "loaded = 'envhub.interop' in sys.modules\n"
        "venv = envhub.interop.to_gymnasium_vector(envhub.make('gymnax/CartPole-v1', num_envs=2))\n"
        "print(loaded, type(venv).__name__, 'envhub.interop' in sys.modules)\n"
        "try:\n    envhub.no_such_module\nexcept AttributeError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "False EnvhubVectorEnv True", out
    assert out[1] == "module 'envhub' has no attribute 'no_such_module'"


def test_single_env_passes_gymnasiums_checker():
    env = interop.to_gymnasium(envhub.make("gymnax/CartPole-v1"))
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    again, _ = env.reset(seed=3)
    np.testing.assert_array_equal(obs, again)


def test_single_env_returns_the_reached_obs_at_the_end():
    env = interop.to_gymnasium(envhub.make("gymnax/Pendulum-v1", max_steps_in_episode=3))
    env.reset(seed=0)
    results = [env.step(np.zeros(1, np.float32)) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert env.observation_space.contains(results[-1][0])


def test_vector_env_same_step_autoreset():
    env = envhub.make("gymnax/Pendulum-v1", num_envs=4, max_steps_in_episode=3)
    venv = interop.to_gymnasium_vector(env, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    assert venv.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    obs, info = venv.reset(seed=0)
    assert venv.observation_space.contains(obs) and obs.shape == (4, 3)
    for _ in range(3):
        obs, reward, terminated, truncated, info = venv.step(venv.action_space.sample())
    assert truncated.all() and not terminated.any() and info["_final_obs"].all()
    assert all(venv.single_observation_space.contains(o) for o in info["final_obs"])
    assert not np.allclose(np.stack(info["final_obs"]), obs)
    venv.close()


def test_space_conversion():
    tree = spaces.Tree(
        {"a": spaces.Discrete(3, start=1), "b": (spaces.Box(-1.0, 1.0, (2,)), spaces.MultiDiscrete([2, 4]))}
    )
    g = interop.to_gymnasium_space(tree)
    assert isinstance(g, gymnasium.spaces.Dict) and g["a"] == gymnasium.spaces.Discrete(3, start=1)
    assert g["b"][0] == gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    assert isinstance(g["b"][1], gymnasium.spaces.MultiDiscrete)


def test_an_export_refuses_a_render_mode_its_env_does_not_draw():
    from envhub.testing.toy_envs import Corridor

    with pytest.raises(
        envhub.errors.InvalidArgumentError, match=r"to_gymnasium\(render_mode='rgb_array'\): .* draws nothing"
    ):
        interop.to_gymnasium(Corridor(), render_mode="rgb_array")


def test_wrong_batching_is_refused():
    with pytest.raises(ValueError, match="needs a batched env"):
        interop.to_gymnasium_vector(envhub.make("gymnax/CartPole-v1"))
    with pytest.raises(ValueError, match="needs an unbatched env"):
        interop.to_gymnasium(envhub.make("gymnax/CartPole-v1", num_envs=2))


def test_from_gymnax_wraps_a_users_env_object():
    from gymnax.environments.classic_control.cartpole import CartPole

    class ShortCartPole(CartPole):
        @property
        def default_params(self):
            return super().default_params.replace(max_steps_in_episode=5)

    env = interop.from_gymnax(ShortCartPole())
    assert env.id == "gymnax-object/CartPole-v1"
    from envhub import testing

    results = testing.run_checks(lambda **kw: interop.from_gymnax(ShortCartPole()), testing.Options(num_steps=30))
    statuses = {r.name: r.status for r in results}
    assert statuses.pop("truncation") == "skip"  # an adapted object has no time-limit kwarg to set
    assert set(statuses.values()) == {"pass"}, testing.format_report(results)
    state, _ = env.init(jax.random.key(0))
    truncated = []
    for i in range(5):
        state, ts = env.step(jax.random.key(i), state, 0 if i % 2 else 1)
        truncated.append(bool(ts.truncated))
    assert truncated == [False] * 4 + [True]


def test_from_brax_wraps_a_users_env_object():
    from brax import envs

    brax_env = envs.get_environment("inverted_pendulum", backend="generalized")
    env = interop.from_brax(brax_env, episode_length=3, num_envs=2)
    assert env.id == "brax-object/InvertedPendulum"

    @jax.jit  # one compile of init and step: brax op by op is slow to dispatch
    def run(key):
        state, _ = env.init(key)
        step = lambda state, k: env.step(k, state, jnp.zeros((2, 1), jnp.float32))  # noqa: E731
        return jax.lax.scan(step, state, jax.random.split(key, 3))[1]

    ts = run(jax.random.key(0))
    flags = np.asarray(ts.truncated).tolist()
    assert flags[-1] == [True, True] and not any(any(f) for f in flags[:-1])
    assert not np.allclose(ts.obs[-1], ts.final_obs[-1])


def test_wrapping_an_object_needs_the_backends_wrap_object():
    class NoWrap:  # a plugin that registers no envs and offers no wrap_object
        @envhub.hookimpl
        def envhub_register_envs(self, register):
            pass

    from envhub.interop.objects import wrap_object

    envhub.register_backend("nowrap", NoWrap(), replace=True)
    try:
        with pytest.raises(envhub.errors.InvalidArgumentError, match=r"backend 'nowrap' has no wrap_object"):
            wrap_object("nowrap", object())
    finally:
        envhub.unregister_backend("nowrap")


def test_single_export_compiles_once_and_returns_writable_arrays():
    env = interop.to_gymnasium(envhub.make("gymnax/CartPole-v1", max_steps_in_episode=4))
    env.reset(seed=0)
    for i in range(10):
        obs, reward, terminated, truncated, info = env.step(i % 2)
        assert obs.flags.writeable and isinstance(reward, float)
        if terminated or truncated:
            env.reset()
    env.step(np.int64(1))  # another integer type is cast to the space's dtype: no new program
    assert env._runner._step._cache_size() == 1


def test_packing_round_trips_every_dtype():
    from envhub.interop.packing import Packer

    tree = {
        "b": jnp.array([True, False]),
        "i8": jnp.array([-3, 7], jnp.int8),
        "f16": jnp.array([1.5, -2.25], jnp.float16),
        "u32": jnp.array([2**32 - 1], jnp.uint32),
        "f": jnp.float32(np.nan),
        "key": jax.random.key(3),
        "grid": jnp.arange(6, dtype=jnp.int32).reshape(2, 3),
        "flag": jnp.bool_(True),
        "i16": jnp.int16(-5),
        "image": jnp.arange(3 * 4097, dtype=jnp.uint8).reshape(3, 4097),  # large and narrow: travels beside the buffer
        "mask": jnp.arange(5000) % 3 == 0,
    }
    packer = Packer(tree)
    buffer, alone = packed = jax.jit(packer.pack)(tree)
    assert buffer.dtype == jnp.uint32 and buffer.shape == (packer.size,) and len(alone) == 2
    assert packer.size < 100  # the two large narrow leaves are not widened into words
    back = jax.jit(packer.unpack)(packed)
    host = packer.unpack_host(packed)
    for name in ("b", "i8", "f16", "u32", "f", "grid", "flag", "i16", "image", "mask"):
        np.testing.assert_array_equal(back[name], tree[name])
        np.testing.assert_array_equal(host[name], tree[name])
        assert host[name].dtype == tree[name].dtype and host[name].shape == tree[name].shape
        assert isinstance(host[name], np.generic) if host[name].ndim == 0 else host[name].flags.writeable
    np.testing.assert_array_equal(jax.random.key_data(back["key"]), jax.random.key_data(tree["key"]))
