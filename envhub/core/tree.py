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


def same_structure(a: Any, b: Any) -> bool:
    """Whether pytrees ``a`` and ``b`` have one structure (``jax.tree.structure`` equal)."""
    structure: Any = jax.tree.structure  # jaxlib's PyTreeDef has no type mypy resolves: compared as Any
    return bool(structure(a) == structure(b))


__all__ = ["same_structure", "select"]
