"""Calling the host from compiled code, through the cheapest callback the installed jax offers.

``buffer_callback`` (jax >= 0.7) hands the host XLA's output buffers to write into: a few
microseconds per call on CPU. An ordered ``io_callback`` copies the results and threads an
ordering token through the program: tens to hundreds of microseconds per call
(``python benchmarks/host_callback.py`` prints both). Traced host calls use ``buffer_callback``
where jax has it, else ``io_callback``; ``ENVHUB_HOST_CALLBACK=io_callback`` picks the latter.

Arguments travel as ONE packed byte array (every callback argument costs a transfer of its own)
and reach the host function as NumPy arrays of their own shapes and dtypes. With
``buffer_callback``, small results (a step's rewards, flags, counters, small observations)
travel in ONE byte buffer that the host fills with one write and compiled code slices back
into arrays: every extra output buffer costs the host about a microsecond to open. Results over
``PACK_LIMIT`` bytes get their own buffer, written in place.

Ordering: the calls on one host environment are chained by its state (each step consumes the
state the previous call returned), so they run in program order either way. Only with
``io_callback`` are calls on *different*, independent environments also kept in program order.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from envhub.errors import InvalidArgumentError

try:
    from jax.experimental.buffer_callback import buffer_callback
except ImportError:  # jax < 0.6.2 (below the core's floor): the ordered io_callback is the only bridge
    buffer_callback = None  # type: ignore[assignment]

#: jax 0.6 cannot lower an ordered io_callback inside jit (KeyError: OrderedIOEffect); 0.7 can.
IO_CALLBACK_LOWERS = tuple(int(part) for part in jax.__version__.split(".")[:2]) >= (0, 7)

KINDS = ("buffer_callback", "io_callback")
PACK_LIMIT = 16 * 1024  # bytes: results up to this size share the packed buffer...
PACK_MIN = 3  # ...when there are at least this many (slicing them back out costs a little too)


def default_kind() -> str:
    """The callback traced host calls use: ``$ENVHUB_HOST_CALLBACK``, else the cheapest available."""
    wanted = os.environ.get("ENVHUB_HOST_CALLBACK", "")
    if wanted and wanted not in KINDS:
        raise InvalidArgumentError(
            f"ENVHUB_HOST_CALLBACK={wanted!r} is not one of {KINDS}; set one of them, or unset it to take the fastest."
        )
    if wanted == "buffer_callback" and buffer_callback is None:
        raise InvalidArgumentError(
            f"ENVHUB_HOST_CALLBACK=buffer_callback needs jax >= 0.6.2 (this is jax {jax.__version__}); "
            "upgrade jax, or set ENVHUB_HOST_CALLBACK=io_callback."
        )
    if wanted == "io_callback" and not IO_CALLBACK_LOWERS:
        raise InvalidArgumentError(
            f"ENVHUB_HOST_CALLBACK=io_callback needs jax >= 0.7 (jax {jax.__version__} cannot compile an ordered "
            "io_callback); unset it to use buffer_callback, or upgrade jax."
        )
    return wanted or ("buffer_callback" if buffer_callback is not None else "io_callback")


#: Which callback traced host calls use; read when a call is traced (tests switch it to run both).
kind = default_kind()


def call_host(fn: Callable[..., Sequence[Any]], results: Sequence[jax.ShapeDtypeStruct], *args: Any) -> list[Any]:
    """Call ``fn(*numpy_args) -> list of arrays`` on the host from traced code; return ``results``-shaped arrays.

    Each value ``fn`` returns is cast to its result's dtype; one of the result's size is reshaped,
    a scalar is broadcast. ``fn`` should compare equal for equal work (a frozen dataclass, not a
    fresh closure): JAX keys its caches on it, and a new function per call compiles a new program.
    """
    results = [jax.ShapeDtypeStruct(tuple(r.shape), r.dtype) for r in results]
    arrays = [jnp.asarray(a) for a in args]
    fn = _Unpacked(fn, tuple((tuple(a.shape), a.dtype.str) for a in arrays))
    packed = _pack(arrays)
    if kind == "io_callback":
        return list(io_callback(_Exact(fn, tuple(results)), results, packed, ordered=True))
    assert buffer_callback is not None
    layout = _Layout.of(results)
    outs = buffer_callback(_WriteInto(fn, layout), layout.buffers(), has_side_effect=True)(packed)
    return layout.unpack(list(outs))


def _pack(arrays: list[jax.Array]) -> jax.Array:
    """Compiled side: the arrays' bytes, concatenated into one uint8 array (one non-bool array goes as it is)."""
    if len(arrays) == 1 and arrays[0].dtype != jnp.bool_:
        return arrays[0]
    parts = [
        jax.lax.bitcast_convert_type(a.astype(jnp.uint8) if a.dtype == jnp.bool_ else a, jnp.uint8) for a in arrays
    ]
    return jnp.concatenate([p.reshape(-1) for p in parts]) if parts else jnp.zeros((0,), jnp.uint8)


@dataclasses.dataclass(frozen=True)
class _Unpacked:
    """``fn`` called with the arrays of a packed argument (a copy: XLA may reuse its buffer after the call)."""

    fn: Callable[..., Sequence[Any]]
    layout: tuple[tuple[tuple[int, ...], str], ...]  # (shape, dtype) of each argument

    def __post_init__(self) -> None:
        slices, offset = [], 0
        for shape, dtype_str in self.layout:
            dtype = np.dtype(dtype_str)
            size = math.prod(shape) * dtype.itemsize
            slices.append((offset, offset + size, dtype, shape))
            offset += size
        single = len(slices) == 1 and slices[0][2] != np.bool_  # passed as it is, not packed
        object.__setattr__(self, "_slices", None if single else tuple(slices))  # not a field: equality by layout

    def __call__(self, packed: Any) -> Sequence[Any]:
        slices = self._slices  # type: ignore[attr-defined]
        if slices is None:
            return self.fn(np.array(packed))
        packed = np.array(packed, np.uint8)
        return self.fn(*[packed[start:stop].view(dtype).reshape(shape) for start, stop, dtype, shape in slices])


def exact(value: Any, result: jax.ShapeDtypeStruct) -> np.ndarray:
    """``value`` as a NumPy array of ``result``'s dtype and shape (reshaped if the size matches, else broadcast)."""
    a = np.asarray(value, result.dtype)
    if a.shape == result.shape:
        return a
    if a.size == math.prod(result.shape):
        return a.reshape(result.shape)
    return np.full(result.shape, a.reshape(()), a.dtype) if a.size == 1 else np.broadcast_to(a, result.shape)


def _packed_bytes(value: Any, dtype: np.dtype, count: int, result: jax.ShapeDtypeStruct) -> bytes:
    """The bytes of ``exact(value, result)``, cheaply for the common cases (exact size, or a scalar)."""
    a = np.asarray(value, dtype)
    if a.size == count:
        return a.tobytes()
    return a.tobytes() * count if a.size == 1 else exact(a, result).tobytes()


@dataclasses.dataclass(frozen=True)
class _Exact:
    """``io_callback``'s calling convention around ``fn``: values cast to the declared results."""

    fn: Callable[..., Sequence[Any]]
    results: tuple[jax.ShapeDtypeStruct, ...]

    def __call__(self, *args: Any) -> list[np.ndarray]:
        return [exact(v, r) for v, r in zip(self.fn(*args), self.results, strict=True)]


@dataclasses.dataclass(frozen=True)
class _Layout:
    """Where each result travels: ``(packed?, offset or buffer index, result, dtype, size)``, in result order."""

    slots: tuple[tuple[bool, int, jax.ShapeDtypeStruct, np.dtype, int], ...]
    packed_bytes: int
    own: tuple[jax.ShapeDtypeStruct, ...]

    @classmethod
    def of(cls, results: Sequence[jax.ShapeDtypeStruct]) -> _Layout:
        slots, offset, own = [], 0, []  # type: ignore[var-annotated]
        small = [math.prod(r.shape) * np.dtype(r.dtype).itemsize <= PACK_LIMIT for r in results]
        pack = sum(small) >= PACK_MIN
        for r, is_small in zip(results, small):
            dtype, count = np.dtype(r.dtype), math.prod(r.shape)
            if pack and is_small:
                slots.append((True, offset, r, dtype, count))
                offset += count * dtype.itemsize
            else:
                slots.append((False, len(own) + int(pack), r, dtype, count))
                own.append(r)
        return cls(tuple(slots), offset, tuple(own))

    def buffers(self) -> list[jax.ShapeDtypeStruct]:
        packed = [jax.ShapeDtypeStruct((self.packed_bytes,), jnp.uint8)] if any(p for p, *_ in self.slots) else []
        return [*packed, *self.own]

    def unpack(self, outs: list[Any]) -> list[Any]:
        """Compiled side: slice every packed result out of the byte buffer (``!= 0`` for bools)."""
        values = []
        for packed, where, r, dtype, count in self.slots:
            if not packed:
                values.append(outs[where])
                continue
            raw = outs[0][where : where + count * dtype.itemsize]
            if dtype == np.bool_:
                values.append(raw.reshape(r.shape) != 0)
            elif dtype.itemsize == 1:
                values.append(jax.lax.bitcast_convert_type(raw, dtype).reshape(r.shape))
            else:
                values.append(jax.lax.bitcast_convert_type(raw.reshape(-1, dtype.itemsize), dtype).reshape(r.shape))
        return values


@dataclasses.dataclass(frozen=True)
class _WriteInto:
    """``buffer_callback``'s calling convention around ``fn``: results are written into XLA's buffers."""

    fn: Callable[..., Sequence[Any]]
    layout: _Layout

    def __call__(self, ctx: Any, out: Sequence[Any], packed: Any) -> None:
        values = self.fn(np.asarray(packed))
        chunks = []
        for value, (packed, where, r, dtype, count) in zip(values, self.layout.slots, strict=True):
            if packed:
                chunks.append(_packed_bytes(value, dtype, count, r))
            else:
                np.asarray(out[where])[...] = exact(value, r)
        if self.layout.packed_bytes:
            np.asarray(out[0])[...] = np.frombuffer(b"".join(chunks), np.uint8)


__all__ = ["KINDS", "PACK_LIMIT", "PACK_MIN", "call_host", "default_kind", "exact"]
