"""The functions envhub's auto-reset schemes are built from (``envhub.native.auto_reset`` chooses among them).

``reset_if_done`` resets one environment when its episode ended (``lax.cond``). Under ``jax.vmap``
a ``cond`` on a batched predicate becomes a ``select`` that computes the reset on every step;
``reset_if_done`` carries its own batching rule instead: one batched reset, skipped when no member
finished (``branch=False``: the reset computed always and selected, for GPUs and TPUs).

For batches made inside the environment (``num_envs``): on CPU a batched reset costs about the same
for 1 or ``num_envs`` members (its many small kernels dominate), so what costs is how often it runs,
not its size. Both of the following give every episode its own sample of the reset distribution:

- ``reset_from_spares``: every row of ``Spares`` holds one spare initial state. The ``k``-th finished
  member of a step (by index) takes the ``k``-th unused spare; when a step needs more spares than
  are left, all ``num_envs`` rows are refilled first, in one batched reset. So resetting costs one
  batched reset per ``num_envs`` episode ends, about once per episode length, instead of one per
  step. The price is memory: the spares double the state. ``reset_from_own_spares`` is the same for
  per-env parameters (each row made with its own env's).
- ``reset_done``: the members that finished are reset on that step (``reset_if_done`` under
  ``vmap``: one batched reset, skipped when none finished), with no extra memory.

Keys are derived per row index (``split(key, num_envs)[i]``), and the spares' bookkeeping is
per row too, so results do not depend on how the batch is sharded over devices. Every leaf of
``Spares`` leads with ``num_envs``: a wrapper that keeps some members' old state (a per-member
``select``) keeps their rows of the spares with them; the generation stamps ensure that no spare is
ever handed out twice, even then. Plugins may call these for batching of their own (``envhub.plugin``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import jax
import jax.numpy as jnp
from jax.custom_batching import custom_vmap

from envhub.core.tree import select

S = TypeVar("S")


def vmap_in_chunks(fn: Callable[..., Any], chunk: int | None) -> Callable[..., Any]:
    """``jax.vmap(fn)``, or, for more than ``chunk`` members, ``chunk`` at a time in sequence (``lax.map``).

    For resets whose batched cost grows faster than the batch: craftax's world generation on CPU takes
    0.27 s vmapped over 64 envs and 112 s over 1024, 1.2 s as 64 chunks of 16.
    """
    if chunk is None:
        return jax.vmap(fn)

    def mapped(*args: Any) -> Any:
        if jax.tree.leaves(args)[0].shape[0] <= chunk:
            return jax.vmap(fn)(*args)
        return jax.lax.map(lambda a: fn(*a), args, batch_size=chunk)

    return mapped


def reset_if_done(
    restart: Callable[[jax.Array, S], S],
    key: jax.Array,
    done: jax.Array,
    state: S,
    chunk: int | None = None,
    branch: bool = True,
) -> S:
    """``restart(key, state)`` if ``done`` else ``state``; under ``jax.vmap``, one batched restart when any member is done.

    ``restart`` must be pure and vmappable; ``state`` is any pytree (e.g. an env state and its obs).
    ``chunk``: the batched restart runs through ``vmap_in_chunks``. ``branch=False``: no ``lax.cond``, the
    restart is computed always and selected (for GPUs and TPUs, where a branch costs a device-to-host round trip).
    """
    if not branch:
        return select(jnp.asarray(done, jnp.bool_), restart(key, state), state)

    @custom_vmap
    def one(key: jax.Array, done: jax.Array, state: S) -> S:
        return jax.lax.cond(done, restart, lambda k, s: s, key, state)

    @one.def_vmap
    def batched(size: int, in_batched: list[Any], key: jax.Array, done: jax.Array, state: S) -> tuple[S, S]:
        def widen(x: jax.Array, is_batched: bool) -> jax.Array:
            return x if is_batched else jnp.broadcast_to(x, (size, *jnp.shape(x)))

        key, done = widen(key, in_batched[0]), widen(done, in_batched[1])
        state = jax.tree.map(widen, state, in_batched[2])
        fresh = lambda: select(done, vmap_in_chunks(restart, chunk)(key, state), state)  # noqa: E731
        out = jax.lax.cond(jnp.any(done), fresh, lambda: state)
        return out, jax.tree.map(lambda _: True, out)

    return one(key, jnp.asarray(done, jnp.bool_), state)


@dataclasses.dataclass(frozen=True)
class Spares(Generic[S]):
    """Spare initial states, one row per member of the batch.

    Attributes:
        states: The spare states, leaves leading with ``num_envs``.
        made: int32, the generation each row was made in.
        era: int32, the current generation (the same in every row; the maximum is read).
        used: int32, the rows below this one are handed out in the current generation (idem).
    """

    states: S
    made: jax.Array
    era: jax.Array
    used: jax.Array


jax.tree_util.register_dataclass(Spares, data_fields=["states", "made", "era", "used"], meta_fields=[])


def no_spares(states: S, own: bool = False) -> Spares[S]:
    """Spares shaped like ``states`` with none usable: the first step with an episode end fills them.

    ``own=True``: for ``reset_from_own_spares`` (a row's spare is usable while ``made == era``).
    """
    n = jax.tree.leaves(states)[0].shape[0]
    zeros = jnp.zeros(n, jnp.int32)
    return Spares(states, zeros - 1 if own else zeros, zeros, jnp.full(n, n, jnp.int32))


def stale_spares(spares: Spares[S], where: jax.Array | None) -> Spares[S]:
    """``spares`` with the rows in ``where`` (all when ``None``) unusable: made for params no longer wanted.

    For ``reset_from_own_spares``; the next episode end of such a row refills the spares.
    """
    made = jnp.full_like(spares.made, -1) if where is None else jnp.where(where, -1, spares.made)
    return dataclasses.replace(spares, made=made)


def reset_from_spares(
    reset_fn: Callable[[jax.Array], S],
    key: jax.Array,
    done: jax.Array,
    states: S,
    spares: Spares[S],
    chunk: int | None = None,
) -> tuple[S, Spares[S]]:
    """Give each member where ``done`` an unused spare, refilling every spare first if too few are left.

    Args:
        reset_fn: One member's reset, ``key -> state``; its output matches one member of ``states``.
        key: This step's key; a refill makes row ``i`` with ``split(key, num_envs)[i]``.
        done: ``(num_envs,)`` bool, the members whose episode ended.
        states: A pytree whose leaves lead with ``num_envs``.
        spares: The spares (``no_spares(states)`` at first).
        chunk: A refill runs through ``vmap_in_chunks``.

    Returns:
        ``states`` with every done member replaced by a spare, and the spares left.
    """
    n = done.shape[0]
    era = jnp.max(spares.era)
    used = jnp.max(jnp.where(spares.era == era, spares.used, 0))
    free = (spares.made == era) & (jnp.arange(n) >= used)
    count = jnp.sum(done, dtype=jnp.int32)

    def refill() -> tuple[S, jax.Array, jax.Array, jax.Array]:
        fresh = vmap_in_chunks(reset_fn, chunk)(jax.random.split(key, n))
        return fresh, jnp.full(n, era + 1, jnp.int32), era + 1, jnp.ones(n, bool)

    pool, made, era, free = jax.lax.cond(
        count > jnp.sum(free, dtype=jnp.int32), refill, lambda: (spares.states, spares.made, era, free)
    )

    def hand_out() -> tuple[S, jax.Array]:
        (rows,) = jnp.nonzero(free, size=n, fill_value=n - 1)  # the free rows, in order
        rank = jnp.cumsum(done, dtype=jnp.int32) - 1  # the k-th done member takes the k-th free row
        taken = rows[jnp.clip(rank, 0, n - 1)]
        return select(done, jax.tree.map(lambda p: p[taken], pool), states), rows[count - 1] + 1

    # Most steps end no episode: skip the gather of a whole batch of states then.
    new, used = jax.lax.cond(count > 0, hand_out, lambda: (states, used))
    return new, Spares(pool, made, jnp.full(n, era, jnp.int32), jnp.full(n, used, jnp.int32))


def reset_from_own_spares(
    reset_fn: Callable[[jax.Array, Any], S],
    key: jax.Array,
    done: jax.Array,
    states: S,
    spares: Spares[S],
    rows: Any,
    chunk: int | None = None,
) -> tuple[S, Spares[S]]:
    """``reset_from_spares`` for per-env parameters: row ``i``'s spare is made by ``reset_fn(key, rows[i])``.

    While every row of ``rows`` (each member's next params) is the same, any spare suits any member: as in
    ``reset_from_spares``, the ``k``-th finished member takes the ``k``-th unused spare, and all rows are
    refilled, in one batched reset, only when too few are left. Once the rows differ, member ``i`` takes only
    spare ``i`` (another would start its episode with the wrong params), and all rows are refilled when a
    finished member finds its own used. A row's spare is usable while ``made == era``; ``stale_spares``
    retires the rows whose params changed.
    """
    n = done.shape[0]
    era = jnp.max(spares.era)
    uniform = jnp.all(jnp.stack([jnp.all(x == x[:1]) for x in jax.tree.leaves(rows)] + [jnp.bool_(True)]))

    def refill() -> tuple[S, jax.Array, jax.Array]:
        fresh = vmap_in_chunks(reset_fn, chunk)(jax.random.split(key, n), rows)
        return fresh, jnp.full(n, era + 1, jnp.int32), era + 1

    free, count = spares.made == era, jnp.sum(done, dtype=jnp.int32)
    short = jnp.where(uniform, count > jnp.sum(free, dtype=jnp.int32), jnp.any(done & ~free))
    pool, made, era = jax.lax.cond(short, refill, lambda: (spares.states, spares.made, era))

    def hand_out() -> tuple[S, jax.Array]:
        (unused,) = jnp.nonzero(made == era, size=n, fill_value=n - 1)  # the unused rows, in order
        rank = jnp.clip(jnp.cumsum(done, dtype=jnp.int32) - 1, 0, n - 1)
        taken = jnp.where(uniform, unused[rank], jnp.arange(n))
        new = select(done, jax.tree.map(lambda p: p[taken], pool), states)
        return new, made.at[jnp.where(done, taken, n)].set(-1, mode="drop")

    new, made = jax.lax.cond(count > 0, hand_out, lambda: (states, made))
    return new, Spares(pool, made, jnp.full(n, era, jnp.int32), spares.used)


def reads_params(reset_fn: Callable[[jax.Array, Any], Any], key: jax.Array, params: Any) -> bool:
    """Whether ``reset_fn(key, params)``'s result depends on ``params`` (read off its jaxpr; a nested call that
    receives them counts as reading them)."""
    jaxpr = jax.make_jaxpr(reset_fn)(key, params).jaxpr
    used = {id(v) for eqn in jaxpr.eqns for v in eqn.invars} | {id(v) for v in jaxpr.outvars}
    return any(id(v) in used for v in jaxpr.invars[len(jax.tree.leaves(key)) :])


def reset_done(
    reset_fn: Callable[[jax.Array], S], keys: jax.Array, done: jax.Array, states: S, chunk: int | None = None
) -> S:
    """Replace ``states[i]`` by ``reset_fn(keys[i])`` where ``done[i]``; no reset when nothing is done."""
    return jax.vmap(lambda k, d, s: reset_if_done(lambda k, _: reset_fn(k), k, d, s, chunk))(keys, done, states)


__all__ = [
    "Spares",
    "no_spares",
    "reads_params",
    "reset_done",
    "reset_from_own_spares",
    "reset_from_spares",
    "reset_if_done",
    "stale_spares",
    "vmap_in_chunks",
]
