import jax
import jax.numpy as jnp
import pytest

import envhub
from envhub.errors import ActionError, ClosedEnvironmentError
from envhub.wrappers import DropFinalObs, Wrapper

KEY = jax.random.key(0)


def test_init_step_reset_roundtrip(registry):
    env = registry.make("toy/Corridor-v0")
    state, ts = env.init(KEY)
    assert isinstance(ts, envhub.TimeStep) and ts.reward.dtype == jnp.float32
    state, ts = jax.jit(env.step)(KEY, state, 1)
    state, ts = env.reset(KEY, state)
    assert not bool(ts.done)


def test_batched_env_takes_one_key(registry):
    env = registry.make("toy/Corridor-v0", num_envs=4)
    state, ts = env.init(KEY)
    assert ts.obs.shape == (4, 2) and ts.reward.shape == (4,)
    state, ts = jax.jit(env.step)(KEY, state, jnp.ones(4, jnp.int32))
    assert ts.obs.shape == (4, 2)
    assert len(set(map(float, ts.obs[:, 0]))) > 1 or len(set(map(float, env.init(jax.random.key(3))[1].obs[:, 0]))) > 1


def test_wrong_action_shape_is_caught_at_trace_time(registry):
    env = registry.make("toy/Corridor-v0", num_envs=4)
    state, _ = env.init(KEY)
    with pytest.raises(ActionError, match=r"Invalid action for 'toy/Corridor-v0': shape \(3,\) where \(4,\) is needed"):
        jax.jit(env.step)(KEY, state, jnp.ones(3, jnp.int32))


def test_float_action_for_discrete_space(registry):
    env = registry.make("toy/Corridor-v0")
    state, _ = env.init(KEY)
    with pytest.raises(ActionError, match=r"dtype float32 where integers are needed; the action space is Discrete\(2"):
        jax.jit(env.step)(KEY, state, jnp.float32(1.0))


def test_none_or_text_actions_are_action_errors(registry):
    env = registry.make("toy/Corridor-v0")
    state, _ = env.init(KEY)
    for bad in (None, "left"):
        with pytest.raises(ActionError, match=rf"Invalid action for 'toy/Corridor-v0': {bad!r} is not an array"):
            env.step(KEY, state, bad)


def test_tree_action_structure_is_checked():
    from envhub.core.env import check_action
    from envhub.spaces import Box, Discrete, Tree

    space = Tree({"move": Discrete(3), "force": Box(-1.0, 1.0, (2,))})
    out = check_action("x/Y", space, {"move": 1, "force": jnp.zeros(2, jnp.int32)})
    assert out["force"].dtype == jnp.float32  # ints cast to the Box dtype
    with pytest.raises(ActionError, match="structure does not match"):
        check_action("x/Y", space, {"move": 1})


def test_use_after_close(registry):
    env = registry.make("toy/Corridor-v0")
    state, _ = env.init(KEY)
    env.close()
    env.close()
    with pytest.raises(
        ClosedEnvironmentError, match=r"step\(\) called on environment 'toy/Corridor-v0' after close\(\).*envhub.make"
    ):
        env.step(KEY, state, 0)
    with pytest.raises(ClosedEnvironmentError, match="init"):
        env.init(KEY)


def test_context_manager_closes(registry):
    with registry.make("toy/Corridor-v0", num_envs=2) as env:
        env.init(KEY)
    assert env.closed and env.unwrapped.closed


def test_wrapper_delegates_and_guards_dunders(registry):
    inner = registry.make("toy/Corridor-v0")
    wrapped = DropFinalObs(inner)
    assert wrapped.unwrapped is inner and wrapped.length == inner.length and wrapped.id == "toy/Corridor-v0"
    with pytest.raises(AttributeError):
        wrapped.__setstate__  # noqa: B018 - must not recurse into env
    import copy

    assert copy.copy(wrapped).env is inner
    state, ts = wrapped.init(KEY)
    state, ts2 = wrapped.step(KEY, state, 1)
    assert ts.final_obs is None and ts2.final_obs is None
    assert jax.tree.structure((state, ts)) == jax.tree.structure(wrapped.step(KEY, state, 1))


def test_vmap_over_unbatched_jax_native_env(registry):
    env = registry.make("toy/Corridor-v0")
    keys = jax.random.split(KEY, 3)
    states, ts = jax.vmap(env.init)(keys)
    assert ts.obs.shape == (3, 2)


def test_wrapper_base_is_transparent(registry):
    env = Wrapper(registry.make("toy/Corridor-v0"))
    assert env.action_space == envhub.spaces.Discrete(2) and env.num_envs is None
