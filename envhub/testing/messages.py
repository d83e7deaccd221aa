"""How the kit's failure messages show arrays: a leaf by its pytree path, the first failing position
(``step`` counts the steps after init from 1, ``env`` indexes the batch from 0, then the element inside the
leaf), the value and what it should be; arrays only as ``summarize`` gives them (dtype, shape, a few numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces


def host(x: Any) -> np.ndarray:
    """A host copy of one leaf (typed PRNG keys as their key data, Python scalars as arrays)."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None and jnp.issubdtype(dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return np.asarray(x)


def summarize(x: Any, limit: int = 4) -> str:
    """A short repr of an array: dtype, shape and at most ``limit`` numbers (with min and max when cut),
    e.g. ``float32[2] [6., 0.]`` or ``uint8[84,84,4] [0, 0, 3, 7, ...] min 0 max 255``."""
    a = host(x)
    head = f"{a.dtype.name}[{','.join(map(str, a.shape))}]"
    if a.size <= limit:
        return f"{head} {np.array2string(a.ravel() if a.ndim else a, separator=', ')}"
    first = np.array2string(a.ravel()[:limit], separator=", ")[:-1] + ", ...]"
    if a.dtype.kind in "biuf":
        finite = a[~np.isnan(a)] if a.dtype.kind == "f" else a
        span = f" min {value(finite.min())} max {value(finite.max())}" if finite.size else " all nan"
        return f"{head} {first}{span}"
    return f"{head} {first}"


def summarize_tree(tree: Any, limit: int = 4) -> str:
    """``summarize`` of every leaf, named by its pytree path (just the summary for a single array)."""
    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    if len(leaves) == 1 and not leaves[0][0]:
        return summarize(leaves[0][1], limit)
    return "{" + ", ".join(f"{jax.tree_util.keystr(p)}: {summarize(x, limit)}" for p, x in leaves) + "}"


def value(x: Any) -> str:
    """One element as text (``6.0``, ``3``, ``True``, ``nan``)."""
    return str(np.asarray(x).item() if np.asarray(x).dtype.kind == "b" else np.asarray(x)[()])


def position(index: Sequence[int], axes: Sequence[str], first_step: int = 1) -> str:
    """``(3, 2)`` on axes ``("step", "env")`` as ``"step 4, env 2"`` (a step counts from ``first_step``)."""
    return ", ".join(f"{axis} {i + first_step if axis == 'step' else i}" for axis, i in zip(axes, index))


def element(index: Sequence[int]) -> str:
    """The index inside one leaf, as Python would write it: ``[0]``, ``[1, 2]``, or nothing for a scalar."""
    return f"[{', '.join(map(str, index))}]" if len(index) else ""


def at(where: str) -> str:
    return f" at {where}" if where else ""


def first_bad(bads: Sequence[np.ndarray | None], nlead: int, where: Any = None) -> tuple[int, tuple[int, ...]] | None:
    """(leaf number, full index) of the first bad element, ordered by the leading position, then the leaf, then the
    element; ``where`` (a bool array over the leading axes) limits which positions count."""
    best: tuple[int, int, tuple[int, ...]] | None = None
    for n, bad in enumerate(bads):
        if bad is None or not bad.any():
            continue
        lead = bad.reshape(*bad.shape[:nlead], -1).any(axis=-1) if nlead else np.asarray(bad.any())
        if where is not None:
            lead = lead & np.broadcast_to(np.asarray(where, bool), lead.shape)
        if not lead.any():
            continue
        flat = int(np.argmax(lead.ravel()))
        if best is None or flat < best[0]:
            lead_index = tuple(int(i) for i in np.unravel_index(flat, lead.shape)) if nlead else ()
            inner = bad[lead_index] if nlead else bad
            inner_index = tuple(int(i) for i in np.argwhere(inner)[0]) if np.ndim(inner) else ()
            best = (flat, n, lead_index + inner_index)
    return None if best is None else (best[1], best[2])


def same(x: np.ndarray, y: np.ndarray, rule: str, atol: float | None) -> np.ndarray:
    """Elementwise equality: ``"close"`` as ``trees_close`` (float64, ``atol`` and a relative 1e-5, NaN equals NaN);
    ``"equal"`` as ``leaf_equal`` (bit-identical, or for floats with ``atol`` within it and a relative 1e-5)."""
    if rule == "close":
        return np.isclose(x.astype(np.float64), y.astype(np.float64), atol=atol or 0.0, equal_nan=True)
    if x.dtype.kind != "f":
        return np.asarray(x == y)
    if atol is None:
        return (x == y) | (np.isnan(x) & np.isnan(y))
    return np.isclose(x, y, rtol=1e-5, atol=atol, equal_nan=True)


def tree_difference(
    a: Any,
    b: Any,
    labels: tuple[str, str],
    *,
    root: str | None = None,
    axes: Sequence[str] = (),
    rule: str = "equal",
    atol: float | None = None,
    where: Any = None,
    first_step: int = 1,
) -> str | None:
    """Where two pytrees first differ, in words, or ``None`` if they do not (within ``rule`` and ``atol``).

    ``axes`` name the leaves' leading axes (``("step", "env")``); ``where`` (bool over them) limits the positions
    compared. Two different trees (``root`` None) read ``final_obs[0] at step 4, env 2 is 6.0, but obs[0] is 0.0``;
    one tree from two runs (``root`` names it, ``labels`` say where each value comes from) reads
    ``TimeStep.obs[0] at step 3 is 2.0 in jit, 2.5 in the eager loop``. Both add short summaries of the two rows.
    """
    sa: Any = jax.tree.structure(a)
    sb: Any = jax.tree.structure(b)
    if sa != sb:
        return f"the pytree structures differ: {sa} ({labels[0]}) vs {sb} ({labels[1]})"
    pairs = [
        (path, host(x), host(y)) for (path, x), y in zip(jax.tree_util.tree_flatten_with_path(a)[0], jax.tree.leaves(b))
    ]
    for path, x, y in pairs:
        if x.shape != y.shape:
            name = f"{root or labels[0]}{jax.tree_util.keystr(path)}"
            return f"{name} is {summarize(x)} ({labels[0]}) but {summarize(y)} ({labels[1]}): shapes differ"
    nlead = min([len(axes), *(x.ndim for _, x, _ in pairs)]) if pairs else 0
    bads = [~same(x, y, rule, atol) for _, x, y in pairs]
    found = first_bad(bads, nlead, where)
    if found is None:
        return None
    n, index = found
    path, x, y = pairs[n]
    leaf, lead, inner = jax.tree_util.keystr(path), index[:nlead], index[nlead:]
    where_ = at(position(lead, axes, first_step))
    if root is not None:
        rows = f" ({root}{leaf} there: {summarize(x[lead])} {labels[0]}, {summarize(y[lead])} {labels[1]})"
        name = f"{root}{leaf}{element(inner)}"
        return f"{name}{where_} is {value(x[index])} {labels[0]}, {value(y[index])} {labels[1]}{rows if inner else ''}"
    rows = f" ({labels[0]}{leaf} there: {summarize(x[lead])}, {labels[1]}{leaf} there: {summarize(y[lead])})"
    first, second = (f"{label}{leaf}{element(inner)}" for label in labels)
    return f"{first}{where_} is {value(x[index])}, but {second} is {value(y[index])}{rows if inner else ''}"


def space_violation(
    space: spaces.Space, tree: Any, name: str, *, axes: Sequence[str] = (), first_step: int = 1
) -> str | None:
    """Why ``tree`` (its leaves leading with ``axes``, e.g. ``("step", "env")``) is not in ``space`` as
    ``space.contains`` sees it, naming the first value outside and the bound it breaks; ``None`` if it is in.

    E.g. ``obs[0] at step 4, env 2 is 7.0, above the high bound 6.0 of Box(...) (obs there: float32[2] [7., 0.])``.
    """
    sub_spaces = space.leaves if isinstance(space, spaces.Tree) else [space]
    expected: Any = space.treedef if isinstance(space, spaces.Tree) else jax.tree.structure(0)
    structure: Any = jax.tree.structure(tree)
    if structure != expected:
        return f"{name} has pytree structure {structure}, but {space!r} has {expected}"
    paths_leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    nlead = len(axes)
    bads: list[np.ndarray | None] = []
    for (path, leaf), sub in zip(paths_leaves, sub_spaces):
        x = host(leaf)
        kinds = "iu" if not isinstance(sub, spaces.Box) else {"f": "f", "b": "b"}.get(sub.dtype.kind, "iu")
        if x.ndim < nlead or tuple(x.shape[nlead:]) != tuple(sub.shape) or x.dtype.kind not in kinds:
            leading = f" (leading axes {', '.join(axes)})" if nlead else ""
            return (
                f"{name}{jax.tree_util.keystr(path)} is {x.dtype.name} of shape {x.shape}{leading}, "
                f"but {sub!r} holds {sub.dtype.name} of shape {tuple(sub.shape)}"
            )
        if isinstance(sub, spaces.Box):
            bads.append(~((x >= sub.low) & (x <= sub.high)))
        elif isinstance(sub, spaces.MultiDiscrete):
            bads.append(~((x >= sub.start) & (x < sub.start + sub.nvec)))
        else:  # a space of another kind: its contains() decides, per leading position (the element is not named)
            outside = np.zeros(x.shape, bool)
            for lead_index in np.ndindex(*x.shape[:nlead]):
                outside[lead_index] = not bool(sub.contains(x[lead_index]))
            bads.append(outside)
    found = first_bad(bads, nlead)
    if found is None:
        return None
    n, index = found
    (path, leaf), sub = paths_leaves[n], sub_spaces[n]
    x = host(leaf)
    lead, inner = index[:nlead], index[nlead:]
    v = x[index]
    if isinstance(sub, spaces.Box):
        low, high = sub.low[inner], sub.high[inner]
        if np.isnan(v):
            why = f"not within [{value(low)}, {value(high)}]"
        elif v < low:
            why = f"below the low bound {value(low)}"
        else:
            why = f"above the high bound {value(high)}"
    elif isinstance(sub, spaces.MultiDiscrete):
        start, stop = sub.start[inner], sub.start[inner] + sub.nvec[inner]
        why = f"outside [{value(start)}, {value(stop)})"
    else:
        why = "outside the space"
    leaf_name = f"{name}{jax.tree_util.keystr(path)}"
    rows = f" ({leaf_name} there: {summarize(x[lead])})" if inner else ""
    return f"{leaf_name}{element(inner)}{at(position(lead, axes, first_step))} is {value(v)}, {why} of {sub!r}{rows}"


def rollout_axes(batch_ndim: int, step: bool = True) -> tuple[str, ...]:
    """Names of a rollout's leading axes: ``step`` (if ``step``), then ``env`` for each batch axis."""
    return ("step",) * step + ("env",) * batch_ndim


def first_set(flags: np.ndarray, axes: tuple[str, ...], first_step: int = 1) -> str:
    """The first position where ``flags`` is set, e.g. ``step 4, env 2``."""
    index = np.argwhere(flags)
    return position(tuple(int(i) for i in index[0]), axes, first_step) if len(index) else "?"


__all__ = [
    "at",
    "element",
    "first_set",
    "first_bad",
    "host",
    "position",
    "rollout_axes",
    "same",
    "space_violation",
    "summarize",
    "summarize_tree",
    "tree_difference",
    "value",
]
