"""Spaces: shape, dtype and bounds of actions and observations.

Every space has a ``shape`` and a ``dtype``; ``sample(key, shape=())`` and ``contains(x)`` work
under ``jax.jit``. ``Tree`` holds any pytree of spaces (dicts, tuples, nesting). ``batch(n)``
returns the space of ``n`` stacked values, which is what a ``num_envs=n`` environment exposes.
Bounds are kept as NumPy arrays so spaces stay static, hashable-by-identity configuration.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.errors import InvalidArgumentError


class Space(abc.ABC):
    """A set of values of one shape and dtype."""

    shape: Any  # a tuple of ints; for Tree, a pytree of them
    dtype: Any  # a NumPy dtype; for Tree, a pytree of them

    @abc.abstractmethod
    def sample(self, key: jax.Array, shape: Sequence[int] = ()) -> jax.Array:
        """Draw values uniformly (or, for unbounded Boxes, from a covering distribution) with one PRNG ``key``.

        Raises:
            InvalidArgumentError: ``key`` is not one PRNG key (``_check_sample_key``).
        """

    @abc.abstractmethod
    def contains(self, x: Any) -> jax.Array:
        """Return a JAX bool: ``x`` has this shape, this dtype kind and lies within the bounds.

        It answers, never raises (as gymnasium's): a value that is no array of numbers (a str, None) is not contained.
        """

    @abc.abstractmethod
    def batch(self, n: int) -> Space:
        """Return the space of ``n`` stacked values of this space."""

    def _shape_and_kind_ok(self, x: Any, kinds: str) -> bool:
        try:
            dtype = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype  # tracers too: no value read
            return tuple(np.shape(x)) == self.shape and dtype.kind in kinds
        except (TypeError, ValueError):  # a ragged list: not in any space (a str or None is of kind "U" or "O")
            return False

    def _check_sample_key(self, key: Any) -> None:
        """Refuse ``key`` unless it is one PRNG key (``key_problem``), worded for a space."""
        got, batch = key_problem(key)
        if got:
            many = "; to draw n values, pass one key and shape=(n,)" if batch else ""
            raise InvalidArgumentError(f"{self!r}.sample takes one PRNG key, e.g. jax.random.key(0), not {got}{many}.")


def key_problem(key: Any) -> tuple[str, bool]:
    """What is wrong with ``key`` as one PRNG key ("" if nothing), and whether it is a batch of keys: the key rule
    of ``sample``, ``init``, ``reset`` and ``step`` (``envhub.core.keys``). Shape and dtype only, so free in ``jit``.

    One key is a typed key of shape ``()`` (``jax.random.key(0)``) or a raw ``uint32`` key of one axis
    (``jax.random.PRNGKey(0)``: ``(2,)``, or ``(4,)`` for the ``rbg`` implementations).
    """
    dtype, shape = getattr(key, "dtype", None), getattr(key, "shape", None)
    if dtype is None or shape is None:
        return f"{type(key).__name__} {key!r:.40}", False
    if jnp.issubdtype(dtype, jax.dtypes.prng_key):
        return ("", False) if shape == () else (f"a batch of keys of shape {tuple(shape)}", True)
    if np.dtype(dtype) == np.uint32 and len(shape) >= 1:
        return ("", False) if len(shape) == 1 else (f"a batch of raw keys of shape {tuple(shape)}", True)
    return f"an array of dtype {np.dtype(dtype).name} and shape {tuple(shape)}", False


class Box(Space):
    """An array with elementwise bounds; ``low``/``high`` broadcast to ``shape`` and may be inf."""

    def __init__(self, low: Any, high: Any, shape: Sequence[int] | None = None, dtype: Any = np.float32):
        self.dtype = np.dtype(dtype)
        low_arr, high_arr = np.asarray(low), np.asarray(high)
        self.shape = tuple(map(int, shape)) if shape is not None else np.broadcast_shapes(low_arr.shape, high_arr.shape)
        bound_dtype = np.float64 if self.dtype.kind == "f" else np.int64 if self.dtype.kind in "iu" else np.bool_
        if self.dtype.kind in "iu":  # integer Boxes may be given infinite bounds: clip to the dtype
            info = np.iinfo(self.dtype)
            low_arr = np.clip(np.nan_to_num(low_arr, neginf=info.min, posinf=info.max), info.min, info.max)
            high_arr = np.clip(np.nan_to_num(high_arr, neginf=info.min, posinf=info.max), info.min, info.max)
        self.low: np.ndarray = np.broadcast_to(low_arr.astype(bound_dtype), self.shape).copy()
        self.high: np.ndarray = np.broadcast_to(high_arr.astype(bound_dtype), self.shape).copy()
        if np.any(self.low > self.high):
            raise InvalidArgumentError(f"Box needs low <= high everywhere; got low={low!r}, high={high!r}.")

    def sample(self, key: jax.Array, shape: Sequence[int] = ()) -> jax.Array:
        self._check_sample_key(key)
        full = (*shape, *self.shape)
        if self.dtype.kind == "b":
            return jax.random.bernoulli(key, 0.5, full)
        if self.dtype.kind in "iu":
            # randint's maxval is exclusive and high + 1 may overflow the dtype, so draw `high`
            # itself with probability 1 / (span + 1) and otherwise uniformly from [low, high).
            k_int, k_top = jax.random.split(key)
            lo, hi = jnp.asarray(self.low, self.dtype), jnp.asarray(self.high, self.dtype)
            below = jax.random.randint(k_int, full, lo, hi, dtype=self.dtype)
            top = jax.random.uniform(k_top, full) < 1.0 / (self.high.astype(np.float64) - self.low + 1)
            return jnp.where(top | (lo == hi), hi, below)
        low, high = self.low, self.high
        lo_fin, hi_fin = np.isfinite(low), np.isfinite(high)
        k_uni, k_exp, k_norm = jax.random.split(key, 3)
        # (1 - u) * low + u * high stays finite even when high - low overflows (bounds near float max).
        u = jax.random.uniform(k_uni, full)
        uniform = (1 - u) * np.where(lo_fin, low, 0).astype(self.dtype) + u * np.where(hi_fin, high, 1).astype(
            self.dtype
        )
        exponential = jax.random.exponential(k_exp, full)
        normal = jax.random.normal(k_norm, full)
        out = jnp.where(
            lo_fin & hi_fin,
            uniform,
            jnp.where(
                lo_fin,
                np.where(lo_fin, low, 0) + exponential,
                jnp.where(hi_fin, np.where(hi_fin, high, 0) - exponential, normal),
            ),
        )
        return out.astype(self.dtype)

    def contains(self, x: Any) -> jax.Array:
        kinds = {"f": "f", "b": "b"}.get(self.dtype.kind, "iu")
        if not self._shape_and_kind_ok(x, kinds):
            return jnp.asarray(False)
        x = jnp.asarray(x)
        return jnp.all((x >= self.low) & (x <= self.high))

    def batch(self, n: int) -> Box:
        return Box(
            np.broadcast_to(self.low, (n, *self.shape)), np.broadcast_to(self.high, (n, *self.shape)), dtype=self.dtype
        )

    def __repr__(self) -> str:
        low, high = _bound_repr(self.low), _bound_repr(self.high)
        return f"Box(low={low}, high={high}, shape={self.shape}, dtype={self.dtype.name})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Box)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and np.array_equal(self.low, other.low)
            and np.array_equal(self.high, other.high)
        )

    __hash__ = object.__hash__


class MultiDiscrete(Space):
    """Integers with ``start[i] <= x[i] < start[i] + nvec[i]`` elementwise."""

    def __init__(self, nvec: Any, start: Any = None, dtype: Any = np.int32):
        self.dtype = np.dtype(dtype)
        if self.dtype.kind not in "iu":
            raise InvalidArgumentError(f"{type(self).__name__} needs an integer dtype, got {self.dtype.name!r}.")
        self.nvec = np.asarray(nvec, np.int64)
        self.shape = self.nvec.shape
        self.start = np.broadcast_to(np.asarray(0 if start is None else start, np.int64), self.shape).copy()
        if np.any(self.nvec <= 0):
            raise InvalidArgumentError(f"{type(self).__name__} needs n > 0 everywhere; got {nvec!r}.")

    def sample(self, key: jax.Array, shape: Sequence[int] = ()) -> jax.Array:
        self._check_sample_key(key)
        full = (*shape, *self.shape)
        lo = jnp.asarray(self.start, self.dtype)
        return jax.random.randint(key, full, lo, lo + jnp.asarray(self.nvec, self.dtype), dtype=self.dtype)

    def contains(self, x: Any) -> jax.Array:
        if not self._shape_and_kind_ok(x, "iu"):
            return jnp.asarray(False)
        x = jnp.asarray(x)
        return jnp.all((x >= self.start) & (x < self.start + self.nvec))

    def batch(self, n: int) -> MultiDiscrete:
        return MultiDiscrete(
            np.broadcast_to(self.nvec, (n, *self.shape)), np.broadcast_to(self.start, (n, *self.shape)), self.dtype
        )

    def __repr__(self) -> str:
        start = "" if not self.start.any() else f", start={_bound_repr(self.start)}"
        return f"MultiDiscrete({_bound_repr(self.nvec)}{start}, shape={self.shape}, dtype={self.dtype.name})"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, MultiDiscrete)
            and self.dtype == other.dtype
            and np.array_equal(self.nvec, other.nvec)
            and np.array_equal(self.start, other.start)
        )

    __hash__ = object.__hash__


class Discrete(MultiDiscrete):
    """One integer in ``[start, start + n)``; ``shape`` is ``()`` unless batched."""

    def __init__(self, n: int, start: int = 0, dtype: Any = np.int32, shape: Sequence[int] = ()):
        if int(n) <= 0:
            raise InvalidArgumentError(f"Discrete needs n > 0, got {n!r}.")
        super().__init__(np.full(tuple(shape), int(n)), np.full(tuple(shape), int(start)), dtype)
        self.n = int(n)
        self.start_value = int(start)

    def batch(self, n: int) -> Discrete:
        return Discrete(self.n, self.start_value, self.dtype, (n, *self.shape))

    def __repr__(self) -> str:
        start = f", start={self.start_value}" if self.start_value else ""
        shape = f", shape={self.shape}" if self.shape else ""
        return f"Discrete({self.n}{start}{shape}, dtype={self.dtype.name})"


class Tree(Space):
    """Any pytree of spaces, e.g. ``Tree({"pos": Box(...), "goal": (Discrete(4), Discrete(4))})``.

    ``shape`` and ``dtype`` are pytrees of the same structure; ``sample`` returns that pytree.
    """

    def __init__(self, spaces: Any):
        # A Tree nested in a Tree is inlined, so equal spaces have one canonical structure.
        spaces = jax.tree.map(lambda s: s.spaces if isinstance(s, Tree) else s, spaces, is_leaf=_is_space)
        self.spaces = spaces
        leaves, treedef_ = jax.tree.flatten(spaces, is_leaf=_is_space)
        treedef: Any = treedef_
        self.treedef: Any = treedef
        bad = [leaf for leaf in leaves if not isinstance(leaf, Space)]
        if bad:
            raise TypeError(f"Tree leaves must be envhub spaces; got {bad[0]!r} of type {type(bad[0]).__name__}.")
        self.leaves: list[Space] = leaves
        self.shape = treedef.unflatten([s.shape for s in leaves])
        self.dtype = treedef.unflatten([s.dtype for s in leaves])

    def sample(self, key: jax.Array, shape: Sequence[int] = ()) -> Any:
        self._check_sample_key(key)
        keys = jax.random.split(key, max(len(self.leaves), 1))
        return self.treedef.unflatten([s.sample(k, shape) for s, k in zip(self.leaves, keys)])

    def contains(self, x: Any) -> jax.Array:
        try:
            x_leaves = self.treedef.flatten_up_to(x)
        except (ValueError, TypeError):
            return jnp.asarray(False)
        result = jnp.asarray(True)
        for space, leaf in zip(self.leaves, x_leaves):
            result = result & space.contains(leaf)
        return result

    def batch(self, n: int) -> Tree:
        return Tree(self.treedef.unflatten([s.batch(n) for s in self.leaves]))

    def __getitem__(self, key: Any) -> Space:
        sub = self.spaces[key]
        return sub if isinstance(sub, Space) else Tree(sub)

    def __repr__(self) -> str:
        return f"Tree({self.spaces!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tree) and self.treedef == other.treedef and self.leaves == other.leaves

    __hash__ = object.__hash__


def convert(space: Space, leaf: Callable[[Space], Any], node: Callable[[Any], Any]) -> Any:
    """``space`` in another library's terms, every export's one walk: ``leaf`` per leaf, ``node`` per node (docs/interop.md)."""

    def walk(x: Any) -> Any:
        if isinstance(x, Space):
            return leaf(x)
        if isinstance(x, dict):
            return node({k: walk(v) for k, v in x.items()})
        return node(type(x)(*map(walk, x)) if hasattr(x, "_fields") else tuple(map(walk, x)))

    return walk(space.spaces if isinstance(space, Tree) else space)


def _is_space(x: Any) -> bool:
    return isinstance(x, Space)


def _bound_repr(a: np.ndarray) -> str:
    """A short repr of bounds: one value if all equal, one row if a batch repeats it."""
    if a.size and np.all(a == a.flat[0]):
        return repr(a.flat[0].item())
    if a.ndim >= 2 and np.all(a == a[:1]):
        return _bound_repr(a[0])
    return np.array2string(a, separator=", ", threshold=8, precision=4)


__all__ = ["Box", "Discrete", "MultiDiscrete", "Space", "Tree", "convert", "key_problem"]
