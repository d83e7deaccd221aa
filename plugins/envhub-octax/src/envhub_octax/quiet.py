"""The warnings octax's code gives that tell an envhub-octax user nothing, dropped while octax builds or is traced."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """While octax builds a game or its reset or step is traced: no FutureWarning about its scatters' dtypes (only that)."""
    with warnings.catch_warnings():
        # octax 0.1.1 writes int32/uint16 values into uint8 and bool arrays (`.at[...].set`), and jax warns, as it
        # traces each, that a future release will refuse the implicit cast: octax's code to change, nothing the
        # user can do; the cast, and so the game, is the same with or without the warning.
        warnings.filterwarnings("ignore", message=r"scatter inputs have incompatible types", category=FutureWarning)
        yield
