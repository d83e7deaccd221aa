"""Pytree helpers shared by the core, the wrappers and the backends."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


def select(where: jax.Array, new: Any, old: Any) -> Any:
    """Per environment, take ``new`` where ``where`` is true, else ``old`` (leaves lead with the batch)."""

    def pick(a: jax.Array, b: jax.Array) -> jax.Array:
        mask = jnp.reshape(where, jnp.shape(where) + (1,) * (jnp.ndim(a) - jnp.ndim(where)))
        return jnp.where(mask, a, b)

    return jax.tree.map(pick, new, old)


__all__ = ["select"]
