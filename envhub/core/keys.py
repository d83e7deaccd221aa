"""The key rule of ``init``, ``reset`` and ``step``: one PRNG key, checked at trace time (shape and dtype only).

A key is a typed key of shape ``()`` (``jax.random.key(0)``) or a raw ``uint32`` key of one axis
(``jax.random.PRNGKey(0)``: shape ``(2,)``, or ``(4,)`` for the ``rbg`` implementations). A batched env takes
one key too and splits it inside, so a batch of keys is refused with that fix, as are an int, None and floats.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.errors import InvalidArgumentError


def check_key(env_id: str, method: str, key: Any) -> None:
    """Refuse ``key`` unless it is one PRNG key (see the module docstring); free inside ``jit`` (no value read).

    Raises:
        InvalidArgumentError: names the method, what was passed and the fix.
    """
    dtype, shape = getattr(key, "dtype", None), getattr(key, "shape", None)
    if dtype is not None and shape is not None:
        if jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
            if shape == ():
                return
            got = f"a batch of keys of shape {tuple(shape)}"
        elif np.dtype(dtype) == np.uint32 and len(shape) == 1:
            return  # a raw key (jax.random.PRNGKey): its length depends on the PRNG implementation
        elif np.dtype(dtype) == np.uint32 and len(shape) > 1:
            got = f"a batch of raw keys of shape {tuple(shape)}"
        else:
            got = f"an array of dtype {np.dtype(dtype).name} and shape {tuple(shape)}"
    else:
        got = f"{type(key).__name__} {key!r:.40}"
    batch = " (a batched env takes one key and splits it inside; vmap the call to give one key per env)"
    raise InvalidArgumentError(
        f"{method} of {env_id!r} takes one PRNG key, e.g. jax.random.key(0), not {got}"
        f"{batch if 'batch' in got else ''}."
    )


__all__ = ["check_key"]
