"""The kit's checks of compiled programs (pure, export, refusal) pass a correct env, catch each
violation, and skip, saying why, where they do not apply."""

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback

from envhub import spaces, testing
from envhub.testing.compiled_checks import host_callbacks, invalid_action
from envhub.testing.toy_envs import Corridor

OPTIONS = testing.Options(time_limit_kwarg="max_steps", time_limit=5)
NEW = ["refusal", "pure", "export"]
HAS_FLATBUFFERS = importlib.util.find_spec("flatbuffers") is not None


def make(bug=None, cls=Corridor, **settings):
    def factory(**kwargs):
        env = cls(bug=bug, **kwargs)
        for name, value in settings.items():
            setattr(env, name, value)
        return env

    return factory


def lowered(fn):
    return jax.jit(fn).lower(jnp.ones(3)).as_text()


def test_host_callbacks_finds_every_kind_of_python_callback_and_nothing_in_a_pure_program():
    shape = jax.ShapeDtypeStruct((3,), jnp.float32)
    assert host_callbacks(lowered(lambda x: jnp.sin(x) * 2)) == []
    assert host_callbacks(lowered(lambda x: jax.pure_callback(np.cos, shape, x))) == ["xla_ffi_python_cpu_callback"]
    assert host_callbacks(lowered(lambda x: io_callback(np.cos, shape, x))) == ["xla_ffi_python_cpu_callback"]

    def printed(x):
        jax.debug.print("{}", x)
        return jax.pure_callback(np.cos, shape, x)

    assert host_callbacks(lowered(printed)) == ["xla_ffi_python_cpu_callback"] * 2
    assert host_callbacks('%0 = stablehlo.custom_call @"xla_python_gpu_callback"(%arg0)') == ["xla_python_gpu_callback"]
    assert host_callbacks("stablehlo.custom_call @cu_threefry2x32(%0)") == []  # a device kernel, not the host


def test_a_correct_env_passes_the_three_checks():
    results = testing.run_checks(make(), OPTIONS, only=NEW)
    for r in results:
        if r.name == "export" and not HAS_FLATBUFFERS:  # the only way export may not pass: said so
            assert r.skipped and "serialization was not tested" in r.message and "flatbuffers" in r.message
        else:
            assert r.passed, testing.format_report(results)


@pytest.mark.parametrize(
    "bug,check,message",
    [
        ("host_callback", "pure", "the program of step calls the host (xla_ffi_python_cpu_callback)"),
        ("host_callback", "export", "jax.export refused the step"),
        ("unchecked_values", "refusal", "eager env.step: an invalid action was accepted"),
        ("unchecked_values", "pure", "validate_actions='strict' put no host callback in step"),
        ("refusal_deletes_state", "refusal", "the state passed in cannot step again"),
    ],
)
def test_each_violation_is_caught(bug, check, message):
    result = testing.run_check(check, make(bug), OPTIONS)
    assert result.failed and message in result.message, result


@jax.custom_batching.custom_vmap
def _identity(x):
    return x


@_identity.def_vmap
def _(axis_size, in_batched, x):  # only the vmapped program goes to the host
    return jax.pure_callback(np.asarray, jax.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential"), True


def test_a_callback_that_only_vmap_adds_is_caught_too():
    class VmapCallsHost(Corridor):
        def _step(self, key, state, action):
            state, ts = super()._step(key, state, action)
            return state, ts.replace(reward=_identity(ts.reward))

    result = testing.run_check("pure", make(cls=VmapCallsHost), OPTIONS)
    assert result.failed and result.message.startswith("the program of jax.vmap(step) calls the host")


def test_host_envs_skip_pure_and_export_with_the_reason():
    class HostLike(Corridor):
        is_jax_native = False

    for name in ("pure", "export"):
        result = testing.run_check(name, make(cls=HostLike), OPTIONS)
        assert result.skipped and "a host environment calls the host by design" in result.message


def test_skips_say_why_the_check_does_not_apply():
    strict = testing.run_check("pure", make(validate_actions="strict"), OPTIONS)
    assert strict.skipped and "validate_actions='strict' adds a host callback" in strict.message
    off = testing.run_check("refusal", make(validate_actions=False), OPTIONS)
    assert off.skipped and "validate_actions=False" in off.message
    no_export = testing.run_check("export", make(), testing.Options(export=False))
    assert no_export.skipped and "Options(export=False)" in no_export.message

    class IntBox(Corridor):  # integer Box actions: no value can be invalid
        @property
        def action_space(self):
            return spaces.Box(0, 1, (), dtype=jnp.int32)

    result = testing.run_check("refusal", make(cls=IntBox), OPTIONS)
    assert result.skipped and "can be invalid" in result.message


def test_strict_refusal_is_a_hard_stop_in_plain_jit():
    assert testing.run_check("refusal", make(validate_actions="strict"), OPTIONS).passed


def test_export_without_flatbuffers_compares_then_skips(monkeypatch):
    def no_flatbuffers(self, *args, **kwargs):
        raise ImportError("Please install 'flatbuffers' in order to use Exported serialization")

    monkeypatch.setattr(jax.export.Exported, "serialize", no_flatbuffers)
    result = testing.run_check("export", make(), OPTIONS)
    assert result.skipped and "it matches env.step" in result.message and "install 'flatbuffers'" in result.message
    real_call = jax.export.Exported.call

    def off_by_one(self, *args, **kwargs):
        state, ts = real_call(self, *args, **kwargs)
        return state, ts.replace(reward=ts.reward + 1)

    monkeypatch.setattr(jax.export.Exported, "call", off_by_one)
    broken = testing.run_check("export", make(), OPTIONS)  # a mismatch still fails
    assert broken.failed and "differ from env.step's" in broken.message


@pytest.mark.skipif(not HAS_FLATBUFFERS, reason="jax.export's serialize() needs the flatbuffers package")
def test_export_serializes_a_typed_key_and_the_state_pytree():
    env = Corridor()
    key = jax.random.key(0)
    state, _ = env.init(key)
    exported = jax.export.deserialize(jax.export.export(jax.jit(env.step))(key, state, 1).serialize())
    assert exported.in_avals[0].dtype == key.dtype  # the typed key went through as one
    out = exported.call(key, state, jnp.int32(1))
    assert jax.tree.structure(out) == jax.tree.structure(env.step(key, state, 1))


def test_invalid_action_breaks_only_the_first_checkable_leaf():
    space = spaces.Tree(
        {
            "a": spaces.Box(0, 3, (2,), dtype=jnp.int32),
            "b": spaces.Discrete(4, start=1, shape=(2,)),
            "c": spaces.Box(-1.0, 1.0, (2,)),
        }
    )
    good = space.sample(jax.random.key(0))
    bad = invalid_action(space, good)
    np.testing.assert_array_equal(bad["a"], good["a"])
    np.testing.assert_array_equal(bad["b"], [5, 5])
    np.testing.assert_array_equal(bad["c"], good["c"])
    assert np.isnan(invalid_action(spaces.Box(-1.0, 1.0, (3,)), jnp.zeros(3))).all()
    assert invalid_action(spaces.Box(0, 3, (2,), dtype=jnp.int32), jnp.zeros(2, jnp.int32)) is None
