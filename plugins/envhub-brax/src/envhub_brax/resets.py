"""Reset the finished members of a batch at a cost set by how many finished, not by the batch size.

``reset_done(reset_fn, keys, done, states, batch_size)`` returns ``states`` with member ``i``
replaced by ``reset_fn(keys[i])`` wherever ``done[i]``. It resets in rounds: a round takes the first
``batch_size`` finished members by index (a fixed-size ``nonzero``), resets them in one vmapped call
and scatters them back; rounds repeat while any finished member is left. A step where nobody
finished runs no round, the usual step runs one round of ``batch_size`` resets, and the rare step
where more than ``batch_size`` finish runs ``ceil(count / batch_size)`` rounds (``batch_size ==
num_envs`` is the plain reset-everything-and-select).

Member ``i`` always gets ``reset_fn(keys[i])``, so the result depends neither on ``batch_size`` nor
on how the batch is sharded over devices, as long as ``keys[i]`` is derived from the index ``i`` (e.g.
``jax.random.split(key, num_envs)`` or ``fold_in(key, i)``), never from a per-shard split. Every
episode gets its own sample of the reset distribution.

Nothing here is brax-specific: any JAX-native backend whose ``reset_fn(key) -> state`` can be vmapped
and whose ``states`` lead with the batch axis can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import jax
import jax.numpy as jnp

S = TypeVar("S")


def default_batch_size(num_envs: int) -> int:
    """A quarter of the batch (at least 1): one round covers the usual step even with short episodes."""
    return max(1, num_envs // 4)


def reset_done(reset_fn: Callable[[jax.Array], S], keys: jax.Array, done: jax.Array, states: S, batch_size: int) -> S:
    """Replace ``states[i]`` by ``reset_fn(keys[i])`` where ``done[i]``, ``batch_size`` resets per round.

    Args:
        reset_fn: One member's reset, ``key -> state``; its output must match one member of ``states``.
        keys: ``(num_envs,)`` keys, ``keys[i]`` derived from the index ``i``.
        done: ``(num_envs,)`` bool, the members to reset.
        states: A pytree whose leaves lead with ``num_envs``.
        batch_size: Members reset together in one round, ``1 <= batch_size <= num_envs``.

    Returns:
        ``states`` with every done member reset.
    """
    num_envs = done.shape[0]
    if not 1 <= batch_size <= num_envs:
        raise ValueError(f"batch_size={batch_size!r} must be in [1, {num_envs}]")
    padding = num_envs + jnp.arange(batch_size)  # distinct out-of-range rows: sorted, unique, dropped

    def one_round(carry: tuple[jax.Array, S]) -> tuple[jax.Array, S]:
        pending, states = carry
        (rows,) = jnp.nonzero(pending, size=batch_size, fill_value=num_envs)
        rows = jnp.where(rows < num_envs, rows, padding)
        fresh = jax.vmap(reset_fn)(keys[jnp.minimum(rows, num_envs - 1)])

        def put(old: jax.Array, new: jax.Array) -> jax.Array:
            return old.at[rows].set(new, mode="drop", indices_are_sorted=True, unique_indices=True)

        return put(pending, jnp.zeros(batch_size, bool)), jax.tree.map(put, states, fresh)

    _, states = jax.lax.while_loop(lambda carry: jnp.any(carry[0]), one_round, (done, states))
    return states


__all__ = ["default_batch_size", "reset_done"]
