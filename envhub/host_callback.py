"""Calling the host from compiled code, through the cheapest callback the installed jax offers.

``buffer_callback`` (jax >= 0.7) hands the host XLA's output buffers to write into: a few
microseconds per call on CPU. An ordered ``io_callback`` copies the results and threads an
ordering token through the program: tens to hundreds of microseconds per call
(``python benchmarks/host_callback.py`` prints both). Traced host calls use ``buffer_callback``
where jax has it, else ``io_callback``; ``ENVHUB_HOST_CALLBACK=io_callback`` picks the latter.

Ordering: the calls on one host environment are chained by its state (each step consumes the
state the previous call returned), so they run in program order either way. Only with
``io_callback`` are calls on *different*, independent environments also kept in program order.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.experimental import io_callback

from envhub.errors import InvalidArgumentError

try:
    from jax.experimental.buffer_callback import buffer_callback
except ImportError:  # jax < 0.7: the ordered io_callback is the only bridge
    buffer_callback = None  # type: ignore[assignment]

KINDS = ("buffer_callback", "io_callback")


def default_kind() -> str:
    """The callback traced host calls use: ``$ENVHUB_HOST_CALLBACK``, else the cheapest available."""
    wanted = os.environ.get("ENVHUB_HOST_CALLBACK", "")
    if wanted and wanted not in KINDS:
        raise InvalidArgumentError(
            f"ENVHUB_HOST_CALLBACK={wanted!r} is not one of {KINDS}; set one of them, or unset it to take the fastest."
        )
    if wanted == "buffer_callback" and buffer_callback is None:
        raise InvalidArgumentError(
            f"ENVHUB_HOST_CALLBACK=buffer_callback needs jax >= 0.7 (this is jax {jax.__version__}); "
            "upgrade jax, or set ENVHUB_HOST_CALLBACK=io_callback."
        )
    return wanted or ("buffer_callback" if buffer_callback is not None else "io_callback")


#: Which callback traced host calls use; read when a call is traced (tests switch it to run both).
kind = default_kind()


def call_host(fn: Callable[..., Sequence[Any]], results: Sequence[jax.ShapeDtypeStruct], *args: Any) -> list[Any]:
    """Call ``fn(*numpy_args) -> list of arrays`` on the host from traced code; return ``results``-shaped arrays.

    ``fn`` should compare equal for equal work (a frozen dataclass, not a fresh closure): JAX keys
    its caches on it, and a new function per call would compile a new program per call.
    """
    if kind == "buffer_callback":
        assert buffer_callback is not None
        return list(buffer_callback(_WriteInto(fn), list(results), has_side_effect=True)(*args))
    return list(io_callback(fn, list(results), *args, ordered=True))


@dataclasses.dataclass(frozen=True)
class _WriteInto:
    """``buffer_callback``'s calling convention around ``fn``: results are written into XLA's buffers."""

    fn: Callable[..., Sequence[Any]]

    def __call__(self, ctx: Any, out: Sequence[Any], *args: Any) -> None:
        values = self.fn(*(np.asarray(a).copy() for a in args))  # XLA may reuse its buffers after the call
        for buffer, value in zip(out, values, strict=True):
            np.asarray(buffer)[...] = value
