import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envhub.errors import InvalidArgumentError
from envhub.spaces import Box, Discrete, MultiDiscrete, Tree

KEY = jax.random.key(0)


def test_box_bounds_broadcast_and_samples_stay_inside():
    box = Box(low=np.array([0.0, -1.0]), high=1.0)
    assert box.shape == (2,) and box.dtype == np.float32
    x = box.sample(KEY, (500,))
    assert x.shape == (500, 2) and x.dtype == jnp.float32
    assert np.all(np.asarray(x) >= [0.0, -1.0]) and np.all(np.asarray(x) <= 1.0)
    assert bool(box.batch(500).contains(x))


@pytest.mark.parametrize("low,high", [(-np.inf, np.inf), (0.0, np.inf), (-np.inf, 3.0), (-3.4e38, 3.4e38)])
def test_box_infinite_or_huge_bounds_sample_finite_values(low, high):
    box = Box(low, high, (1000,))
    x = np.asarray(box.sample(KEY))
    assert np.all(np.isfinite(x))
    assert np.all(x >= low) and np.all(x <= high)
    assert np.unique(x).size > 100  # not a constant


def test_box_integer_dtype_reaches_both_ends_of_a_full_range():
    box = Box(0, 2, (3000,), np.int32)
    counts = np.bincount(np.asarray(box.sample(KEY)))
    assert counts.tolist() and len(counts) == 3 and counts.min() > 800
    full = Box(np.iinfo(np.int32).min, np.iinfo(np.int32).max, (1000,), np.int32)
    assert np.asarray(full.sample(KEY)).std() > 1e8
    assert Box(0, 255, (2,), np.uint8).sample(KEY).dtype == jnp.uint8


def test_box_contains_checks_shape_dtype_kind_and_bounds_under_jit():
    box = Box(0.0, 1.0, (2,))
    contains = jax.jit(box.contains)
    assert bool(contains(jnp.array([0.5, 1.0])))
    assert not bool(contains(jnp.array([0.5, 1.5])))
    assert not bool(box.contains(jnp.array([0.5])))  # shape
    assert not bool(box.contains(jnp.array([True, False])))  # dtype kind
    ints = Box(0, 3, (), np.int32)
    assert bool(ints.contains(2)) and not bool(ints.contains(2.0))


def test_box_shape_is_python_ints():
    box = Box(0.0, 1.0, (np.int64(5), np.int32(2)))  # jaxmarl's continuous MPE hands NumPy ints
    assert (
        box.shape == (5, 2)
        and all(type(n) is int for n in box.shape)
        and repr(box).endswith("shape=(5, 2), dtype=float32)")
    )


def test_box_rejects_low_above_high():
    with pytest.raises(ValueError, match="low <= high"):
        Box(1.0, 0.0, ())


def test_discrete_with_start():
    space = Discrete(3, start=-1)
    x = np.asarray(space.sample(KEY, (1000,)))
    assert set(x.tolist()) == {-1, 0, 1}
    contains = jax.jit(space.contains)
    assert bool(contains(-1)) and bool(contains(1)) and not bool(contains(2))
    assert not bool(space.contains(0.0))  # floats are not integers
    assert not bool(space.contains(jnp.array([0])))  # shape
    assert repr(space) == "Discrete(3, start=-1, dtype=int32)"
    batched = space.batch(4)
    assert batched.shape == (4,) and bool(batched.contains(jnp.array([-1, 0, 1, 0])))


def test_multidiscrete():
    space = MultiDiscrete([2, 5], start=[0, 10])
    x = np.asarray(space.sample(KEY, (1000,)))
    assert x.shape == (1000, 2)
    assert x[:, 0].min() == 0 and x[:, 0].max() == 1 and x[:, 1].min() == 10 and x[:, 1].max() == 14
    assert bool(space.contains(jnp.array([1, 14]))) and not bool(space.contains(jnp.array([1, 15])))
    with pytest.raises(ValueError, match="n > 0"):
        MultiDiscrete([2, 0])


def test_tree_of_nested_spaces():
    space = Tree(
        {"position": Discrete(5), "info": {"goal": Discrete(2), "obstacles": (Discrete(4), Box(0.0, 1.0, (3,)))}}
    )
    assert space.shape == {"position": (), "info": {"goal": (), "obstacles": ((), (3,))}}
    assert space.dtype["info"]["obstacles"][1] == np.float32
    x = jax.jit(space.sample)(KEY)
    assert x["info"]["obstacles"][1].shape == (3,)
    assert bool(jax.jit(space.contains)(x))
    bad = {**x, "position": jnp.int32(7)}
    assert not bool(space.contains(bad))
    assert not bool(space.contains({"position": 1}))  # wrong structure
    assert space.batch(3).sample(KEY)["info"]["obstacles"][1].shape == (3, 3)
    assert space["info"]["goal"] == Discrete(2)


def test_tree_rejects_non_space_leaves():
    with pytest.raises(TypeError, match="must be envhub spaces"):
        Tree({"a": 3})


def test_nested_trees_are_inlined():
    inner = Tree((Discrete(2), Box(0.0, 1.0, ())))
    assert Tree({"a": inner}) == Tree({"a": (Discrete(2), Box(0.0, 1.0, ()))})
    assert jax.tree.structure(Tree({"a": inner}).sample(KEY)) == jax.tree.structure({"a": (0, 0)})


@pytest.mark.parametrize("space", [Discrete(2), Box(0.0, 1.0, (3,)), Tree({"a": Discrete(2)})])
def test_sample_takes_one_prng_key(space):
    one_key = rf"{re.escape(repr(space))}\.sample takes one PRNG key, e.g\. jax\.random\.key\(0\), not "
    with pytest.raises(InvalidArgumentError, match=one_key + r"int 5\.$"):
        space.sample(5)
    with pytest.raises(
        InvalidArgumentError,
        match=one_key + r"a batch of keys of shape \(3,\); to draw n values, pass one key and shape=\(n,\)\.$",
    ):
        space.sample(jax.random.split(KEY, 3))
    assert space.contains(space.sample(jax.random.PRNGKey(0)))  # a raw key is one key too


@pytest.mark.parametrize("space", [Discrete(2), Box(0.0, 1.0, ()), MultiDiscrete([2, 3]), Tree({"a": Discrete(2)})])
@pytest.mark.parametrize("value", ["a", None, object(), b"x", [[1], [1, 2]]])
def test_contains_answers_false_for_what_is_no_array_of_numbers(space, value):
    assert not bool(space.contains(value))
    assert not bool(space.contains({"a": value}))
