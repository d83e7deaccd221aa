"""The key rule of ``init``, ``reset`` and ``step``: one PRNG key (``envhub.spaces.key_problem`` says what one is),
checked at trace time. A batched env takes one key too and splits it inside, so a batch of keys is refused with
that fix, as are an int, None and floats. ``key_to_seeds``: the seeds a key gives host envs."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from envhub.errors import InvalidArgumentError
from envhub.spaces import key_problem


def check_key(env_id: str, method: str, key: Any) -> None:
    """Refuse ``key`` unless it is one PRNG key (``envhub.spaces.key_problem``); free inside ``jit``.

    Raises:
        InvalidArgumentError: names the method, what was passed and the fix.
    """
    got, batch = key_problem(key)
    if got:
        fix = " (a batched env takes one key and splits it inside; vmap the call to give one key per env)"
        raise InvalidArgumentError(
            f"{method} of {env_id!r} takes one PRNG key, e.g. jax.random.key(0), not {got}{fix if batch else ''}."
        )


def key_to_seeds(key: jax.Array, n: int) -> jax.Array:
    """The ``n`` uint32 seeds ``init(key)``/``reset(key, state)`` give the host sub-environments."""
    return jax.random.bits(key, (n,), jnp.uint32)


__all__ = ["check_key", "key_to_seeds"]
