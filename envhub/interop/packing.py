"""Pack a pytree of arrays into one flat ``uint32`` buffer, and back (in JAX, or on the host with NumPy).

A jitted call costs a few microseconds per argument and result leaf on the CPU; the exports call
one per step, so they carry the key and state as one buffer and fetch the TimeStep as another.
Every leaf round-trips exactly: 32-bit leaves are bitcast, 64-bit ones split into two words,
narrower ones (bool, int8, ...) widened, and typed PRNG keys carried as their key data.
A narrow leaf of more than ``WIDEN_AT_MOST`` values (an image) travels on its own, beside the buffer:
XLA on the CPU widens bytes to words at ~20 ns a value (70 ms for a 16-env Atari TimeStep), while one
more result costs microseconds. A packed tree is ``(buffer, alone)``, ``alone`` the tuple of those leaves.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

WIDEN_AT_MOST = 4096  # values of a narrow leaf still widened into the buffer (~0.1 ms); larger ones travel alone


def _unsigned(dtype: np.dtype) -> np.dtype:
    """The unsigned integer dtype as wide as ``dtype`` (to carry its bits)."""
    return np.dtype(f"uint{8 * dtype.itemsize}")


@dataclasses.dataclass(frozen=True)
class _Leaf:
    shape: tuple[int, ...]
    dtype: Any  # the leaf's dtype (for a key: its key-data dtype)
    impl: Any  # a typed key's PRNG impl, else None
    start: int
    words: int
    alone: int | None = None  # its index in the packed tree's ``alone`` tuple, where it is not in the buffer


class Packer:
    """The layout of one pytree structure: ``pack`` it in JAX, ``unpack`` in JAX or ``unpack_host`` in NumPy."""

    def __init__(self, tree: Any):
        leaves, treedef = jax.tree.flatten(tree)
        self.treedef: Any = treedef
        self.leaves, start, alone = [], 0, 0
        for x in leaves:
            impl = None
            dtype = np.dtype(x.dtype) if not jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else None
            shape = tuple(x.shape)
            if dtype is None:  # a typed key: carried as its uint32 key data
                impl = jax.random.key_impl(x) if isinstance(x, jax.Array) else x.dtype._impl
                data = jax.eval_shape(jax.random.key_data, jax.ShapeDtypeStruct(x.shape, x.dtype))
                shape, dtype = tuple(data.shape), np.dtype(data.dtype)
            count = int(np.prod(shape, dtype=np.int64))
            if dtype.itemsize < 4 and count > WIDEN_AT_MOST:
                self.leaves.append(_Leaf(shape, dtype, impl, start, 0, alone))
                alone += 1
                continue
            words = count * (2 if dtype.itemsize == 8 else 1)
            self.leaves.append(_Leaf(shape, dtype, impl, start, words))
            start += words
        self.size = start

    def pack(self, tree: Any) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        """The tree as one ``uint32`` vector and the leaves that travel alone (traceable)."""
        parts, alone = [], []
        for x, leaf in zip(jax.tree.leaves(tree), self.leaves):
            if leaf.alone is not None:
                alone.append(x)
                continue
            if leaf.impl is not None:
                x = jax.random.key_data(x)
            x = jnp.ravel(x)
            if leaf.dtype.itemsize >= 4:
                x = jax.lax.bitcast_convert_type(x, jnp.uint32).ravel()
            elif leaf.dtype != np.bool_:
                x = jax.lax.bitcast_convert_type(x, _unsigned(leaf.dtype))
            x = x.astype(jnp.uint32)
            parts.append(x)
        return (jnp.concatenate(parts) if parts else jnp.zeros(0, jnp.uint32)), tuple(alone)

    def unpack(self, packed: tuple[jax.Array, tuple[jax.Array, ...]]) -> Any:
        """``pack``'s inverse (traceable)."""
        buffer, alone = packed
        out = []
        for leaf in self.leaves:
            if leaf.alone is not None:
                out.append(alone[leaf.alone])
                continue
            x = buffer[leaf.start : leaf.start + leaf.words]
            if leaf.dtype.itemsize == 8:
                x = jax.lax.bitcast_convert_type(x.reshape(-1, 2), leaf.dtype)
            elif leaf.dtype.itemsize == 4:
                x = jax.lax.bitcast_convert_type(x, leaf.dtype)
            elif leaf.dtype == np.bool_:
                x = x.astype(leaf.dtype)
            else:
                x = jax.lax.bitcast_convert_type(x.astype(_unsigned(leaf.dtype)), leaf.dtype)
            x = x.reshape(leaf.shape)
            out.append(jax.random.wrap_key_data(x, impl=leaf.impl) if leaf.impl is not None else x)
        return self.treedef.unflatten(out)

    def unpack_host(self, packed: tuple[Any, tuple[Any, ...]]) -> Any:
        """``pack``'s inverse on the host, from a packed tree on a device: writable NumPy arrays (views of one copy;
        keys as their key data), NumPy scalars for 0-d leaves."""
        buffer = np.array(packed[0], copy=True)
        views = {dtype: buffer.view(dtype) for dtype in self._word_dtypes}
        alone = [np.array(x, copy=True) for x in packed[1]]
        return self.treedef.unflatten([read(buffer, views, alone) for read in self._readers])

    @functools.cached_property
    def _word_dtypes(self) -> set[np.dtype]:
        return {leaf.dtype for leaf in self.leaves if leaf.dtype.itemsize == 4}

    @functools.cached_property
    def _readers(self) -> list[Any]:
        """Per leaf, ``(buffer, views, alone) -> leaf``: ``unpack``'s branches decided once (the exports call this per step)."""
        return [_reader(leaf) for leaf in self.leaves]


def _reader(leaf: _Leaf) -> Any:
    start, stop, shape, dtype = leaf.start, leaf.start + leaf.words, leaf.shape, leaf.dtype
    flat = len(shape) == 1
    if leaf.alone is not None:
        index = leaf.alone
        return lambda b, views, alone: alone[index]
    if dtype.itemsize == 4:  # one word per value: a slice of the buffer seen as this dtype
        if not shape:
            return lambda b, views, alone: views[dtype][start]
        return lambda b, views, alone: views[dtype][start:stop] if flat else views[dtype][start:stop].reshape(shape)
    if dtype == np.bool_:
        if not shape:
            return lambda b, views, alone: b[start] != 0
        return lambda b, views, alone: (b[start:stop] != 0).reshape(shape)
    if dtype.itemsize == 8:  # two words per value, maybe not 8-byte aligned in the buffer: copied out
        return lambda b, views, alone: np.ndarray(shape, dtype, b[start:stop].copy())[()]
    wide = _unsigned(dtype)
    # [()]: a 0-d one as a scalar
    return lambda b, views, alone: b[start:stop].astype(wide).view(dtype).reshape(shape)[()]


__all__ = ["Packer"]
