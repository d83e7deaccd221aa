"""init, reset and step take one PRNG key (envhub/core/keys.py): anything else is refused at once, naming it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envhub.errors import InvalidArgumentError
from envhub.testing.toy_envs import Corridor
from envhub.wrappers import VmapEnvironment

KEY = jax.random.key(0)
ONE = r"takes one PRNG key, e\.g\. jax\.random\.key\(0\), not"


def corridor(num_envs=None):
    env = Corridor()
    env.id = "toy/Corridor-v0"
    return env if num_envs is None else VmapEnvironment(env, num_envs)


@pytest.mark.parametrize(
    ("key", "got"),
    [
        (0, "int 0"),
        (None, "NoneType None"),
        (jnp.zeros(2), r"an array of dtype float32 and shape \(2,\)"),
        (np.uint32(7), r"an array of dtype uint32 and shape \(\)"),
        (jax.random.split(KEY, 3), r"a batch of keys of shape \(3,\) \(a batched env takes one key and splits it"),
        (jax.random.split(jax.random.PRNGKey(0), 3), r"a batch of raw keys of shape \(3, 2\)"),
    ],
    ids=["int", "None", "floats", "uint32-scalar", "typed-batch", "raw-batch"],
)
def test_anything_but_one_key_is_refused_by_init_reset_and_step(key, got):
    for env in (corridor(), corridor(num_envs=3)):
        state, _ = env.init(KEY)
        with pytest.raises(InvalidArgumentError, match=rf"^init of 'toy/Corridor-v0' {ONE} {got}"):
            env.init(key)
        with pytest.raises(InvalidArgumentError, match=rf"^reset of 'toy/Corridor-v0' {ONE} {got}"):
            env.reset(key, state)
        with pytest.raises(InvalidArgumentError, match=rf"^step of 'toy/Corridor-v0' {ONE} {got}"):
            env.step(key, state, env.action_space.sample(KEY))
        if key is not None:  # inside jit too, at trace time (an int arrives as an int32 array)
            with pytest.raises(InvalidArgumentError, match=rf"^step of 'toy/Corridor-v0' {ONE} "):
                jax.jit(env.step)(key, state, env.action_space.sample(KEY))
        env.step(KEY, state, env.action_space.sample(KEY))  # the refused call left the state usable


def test_one_key_of_either_kind_and_a_vmapped_batch_are_accepted():
    env = corridor(num_envs=2)
    for key in (KEY, jax.random.PRNGKey(0)):
        state, ts = env.init(key)
        env.step(key, state, env.action_space.sample(KEY))
    batched = jax.vmap(env.init)(jax.random.split(KEY, 4))[1]  # one key per call, inside vmap
    assert jax.tree.leaves(batched.obs)[0].shape[:2] == (4, 2)
    raw = env.init(jax.random.PRNGKey(0))[1]
    assert jax.tree.leaves(raw.obs)[0].shape[0] == 2
