"""Same-step auto-reset on envpool with **spare environments**, written once for NumPy and for jax.numpy.

envpool resets a finished environment on its *next* step, ignoring that step's action. A pool of
``n`` logical environments therefore holds ``2n`` envpool environments (async mode,
``batch_size=n``): ``n`` are active; the others are either *fresh* (already reset, their first
observation kept in ``first``) or *pending* (finished, not yet reset). When logical env ``i``
finishes, the lowest-numbered fresh spare takes its place in the same step and the finished one
becomes pending. Only when more envs finish in one step than there are fresh spares is one extra
batch sent: exactly ``n`` pending envs, which envpool resets (their actions are ignored, and
nobody sees that step). So almost every step is one envpool round trip.

``advance`` is that scheme. The host bridge runs it with ``xp=numpy`` and a Python ``if``; the XLA
fast path traces it with ``xp=jax.numpy`` and ``lax.cond``; both give bit-identical trajectories.
Arrays are in physical order: ``pool_ids`` (n,) is the envpool env each logical env plays in,
``fresh`` (2n,) and ``first`` (2n, ...) describe every envpool env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np

from envhub.plugin import HostStep, truncated_unless_terminated
from envhub_envpool.layout import Layout
from envhub_envpool.wire import Wire

Cond = Callable[[Any, Callable[[Any], Any], Any], Any]  # (predicate, fn, carry) -> fn(carry) or carry


class Advanced(NamedTuple):
    """One step of the scheme: the new bookkeeping and the step's rows in logical order."""

    token: Any  # whatever the refill threads (the XLA path's send/recv handle; None on the host)
    pool_ids: Any
    fresh: Any
    first: dict[str, Any]
    rows: HostStep  # same-step form, leading axis n (NumPy or JAX arrays)


def advance(xp: Any, cond: Cond, layout: Layout, pool_ids: Any, fresh: Any, first: dict[str, Any], token: Any,
            rows: tuple[Any, ...], refill: Callable[[Any, Any], tuple[Any, Any]]) -> Advanced:  # fmt: skip
    """Apply one ``recv``'s ``rows`` (see ``Layout.row``); ``refill(token, ids) -> (token, rows)`` resets ``ids``."""
    n = layout.n
    eid, obs, reward, terminated, truncated, info = rows
    if xp is np:  # on the host, only the rows out of logical order move, in place (recv's arrays are new each call)
        obs, reward, terminated, truncated, info = in_logical_order(
            pool_ids, eid, (obs, reward, terminated, truncated, info)
        )
    else:
        order = logical_order(xp, n, pool_ids, eid)
        obs, info = take(obs, order), take(info, order)
        reward, terminated, truncated = reward[order], terminated[order], truncated[order]
    done = terminated | truncated
    if xp is np and not done.any():  # the common step on the host: nobody finished, no bookkeeping changes
        truncated = truncated_unless_terminated(terminated, truncated)
        rows = HostStep(obs=obs, reward=reward, terminated=terminated, truncated=truncated, final_obs=obs, info=info)
        return Advanced(token, pool_ids, fresh, first, rows)

    def reset_pending(carry: Any) -> Any:
        token, fresh, first = carry
        pending = scatter(xp, ~fresh, pool_ids, done)  # finished or waiting, and not fresh
        token, (rid, robs, _, _, _, rinfo) = refill(token, first_true(xp, pending, n))
        first = {"obs": put(xp, first["obs"], rid, robs), "info": put(xp, first["info"], rid, rinfo)}
        return token, scatter(xp, fresh, rid, True), first

    token, fresh, first = cond(done.sum() > fresh.sum(), reset_pending, (token, fresh, first))
    spares = first_true(xp, fresh, 2 * n)  # the fresh envs, lowest id first
    rank = xp.clip(xp.cumsum(done) - 1, 0, 2 * n - 1)
    new = xp.where(done, spares[rank], pool_ids).astype(np.int32)
    fresh = scatter(xp, fresh, xp.where(done, new, 2 * n), False, drop=True)
    return Advanced(
        token,
        new,
        fresh,
        first,
        HostStep(
            obs=started(xp, done, new, first["obs"], obs),
            reward=reward,
            terminated=terminated,
            truncated=truncated_unless_terminated(terminated, truncated),
            final_obs=obs,
            info=started(xp, done, new, first["info"], info),
        ),
    )


def logical_order(xp: Any, n: int, pool_ids: Any, eid: Any) -> Any:
    """The row of ``recv``'s output (envpool env ids ``eid``) that holds each logical env."""
    arange = xp.arange(n, dtype=np.int32)
    pos = scatter(xp, xp.zeros(2 * n, np.int32), pool_ids, arange)
    return scatter(xp, xp.zeros(n, np.int32), pos[eid], arange)


def in_logical_order(pool_ids: np.ndarray, eid: np.ndarray, rows: Any) -> Any:
    """``rows`` (NumPy, leading axis n) in logical order: only the rows out of place are copied, within the arrays
    (a read-only array is copied whole). envpool's threads finish in any order, but most steps swap a few rows."""
    moved = np.flatnonzero(eid != pool_ids)
    if not moved.size:
        return rows
    row_of = np.empty(2 * len(pool_ids), np.int32)  # envpool env -> its row (rows hold only active envs)
    row_of[eid] = np.arange(len(eid), dtype=np.int32)
    source = row_of[pool_ids[moved]]
    done: dict[int, np.ndarray] = {}  # one array in two places is permuted once

    def reordered(x: np.ndarray) -> np.ndarray:
        if id(x) not in done:
            y = x if x.flags.writeable else np.array(x, copy=True)
            y[moved] = y[source]  # the right side is gathered into a new array first: a permutation in place
            done[id(x)] = y
        return done[id(x)]

    return jax.tree.map(reordered, rows)


def started(xp: Any, done: Any, new: Any, first: Any, rows: Any) -> Any:
    """``rows`` with the rows where ``done`` replaced by ``first[new]`` (the first rows of the spares taking over).

    On the host only those rows are written, into a copy (``rows`` is also the step's ``final_obs``; ``advance``
    skips this on steps where nobody finished); traced, a select."""
    if xp is not np:
        return where(xp, done, take(first, new), rows)
    ended = np.flatnonzero(done)

    def replaced(x: np.ndarray, f: np.ndarray) -> np.ndarray:
        out = np.array(x, copy=True)
        out[ended] = f[new[ended]]
        return out

    return jax.tree.map(replaced, rows, first)


def numpy_cond(predicate: Any, fn: Callable[[Any], Any], carry: Any) -> Any:
    return fn(carry) if predicate else carry


def force_reset(layout: Layout, pool: Any, pool_ids: np.ndarray, fresh: np.ndarray, first: dict[str, Any],
                mask: np.ndarray) -> tuple[np.ndarray, dict[str, Any], Any, dict[str, Any]]:  # fmt: skip
    """envpool's own reset of the masked logical envs, padded to ``n`` with non-active envs (which become fresh).

    Returns the new ``fresh`` and ``first`` and, in logical order, the obs and info (zeros where not reset).
    """
    n = layout.n
    targets = pool_ids[mask]
    others = np.setdiff1d(np.arange(2 * n), pool_ids)[: n - len(targets)]
    pool._reset(np.concatenate([targets, others]).astype(np.int32))  # envpool's force reset (async: these n rows)
    eid, obs, _, _, _, info = layout.row(pool.recv())
    first = {"obs": put(np, first["obs"], eid, obs), "info": put(np, first["info"], eid, info)}
    fresh = scatter(np, scatter(np, fresh, eid, True), pool_ids, False)
    keep = mask.reshape(n)

    def masked(x: np.ndarray) -> np.ndarray:
        return np.where(_expand(keep, x[pool_ids]), x[pool_ids], 0).astype(x.dtype)

    return fresh, first, jax.tree.map(masked, first["obs"]), jax.tree.map(masked, first["info"])


def first_true(xp: Any, mask: Any, k: int) -> Any:
    """The indices of the first ``k`` true entries of ``mask``, ascending (a scatter: cheaper than a sort)."""
    rank = xp.cumsum(mask) - 1
    slot = xp.where(mask & (rank < k), rank, k)
    return scatter(xp, xp.zeros(k, np.int32), slot, xp.arange(mask.shape[0], dtype=np.int32), drop=True)


def scatter(xp: Any, base: Any, index: Any, values: Any, drop: bool = False) -> Any:
    """A copy of ``base`` with ``base[index] = values``; ``drop``: out-of-range indices are skipped."""
    if xp is np:
        out = np.array(base, copy=True)
        if drop:
            keep = index < len(base)
            index, values = index[keep], values[keep] if np.ndim(values) else values
        out[index] = values
        return out
    return base.at[index].set(values, mode="drop" if drop else None)


def take(tree: Any, index: Any) -> Any:
    return jax.tree.map(lambda x: x[index], tree)


def put(xp: Any, tree: Any, index: Any, values: Any) -> Any:
    return jax.tree.map(lambda a, b: scatter(xp, a, index, b), tree, values)


def where(xp: Any, mask: Any, a: Any, b: Any) -> Any:
    return jax.tree.map(lambda x, y: xp.where(_expand(mask, x), x, y), a, b)


def _expand(mask: Any, like: Any) -> Any:
    return mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))


def numpy_step(layout: Layout, wire: Wire, pool_ids: Any, fresh: Any, first: dict[str, Any], action: Any) -> Advanced:
    """One step of the scheme from Python: envpool's send/recv (``wire``'s) on NumPy arrays (no compile)."""

    def refill(token: None, ids: np.ndarray) -> tuple[None, Any]:
        wire.send(np.zeros((layout.n, *layout.action_space.shape), layout.action_dtype), ids)
        return None, wire.recv()

    wire.send(action, pool_ids)
    return advance(np, numpy_cond, layout, pool_ids, fresh, first, None, wire.recv(), refill)
