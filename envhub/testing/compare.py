"""Host-side comparisons the checks share, and the two ways a check can end early.

A failure that compares arrays or checks values against a space names the leaf (its pytree path),
the first failing position (``step`` counts the steps after init from 1, ``env`` indexes the batch
from 0, then the element index inside the leaf), the value and the value it should equal or the
bound it broke; arrays appear only as ``summarize`` gives them (dtype, shape, a few numbers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from envhub import spaces
from envhub.core.env import Environment


class CheckFailure(AssertionError):
    """A conformance check found a violation of the envhub contract."""


class CheckSkipped(Exception):
    """A conformance check does not apply to this environment; the message says why."""


def require(condition: Any, message: str | Callable[[], str]) -> None:
    """Raise ``CheckFailure(message)`` unless ``condition`` holds; a callable ``message`` is called only then
    (for messages that search the arrays for the first failing value)."""
    if not bool(condition):
        raise CheckFailure(message() if callable(message) else message)


def host(x: Any) -> np.ndarray:
    """A host copy of one leaf (typed PRNG keys as their key data, Python scalars as arrays)."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
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


def _at(where: str) -> str:
    return f" at {where}" if where else ""


def _first_bad(bads: Sequence[np.ndarray | None], nlead: int, where: Any = None) -> tuple[int, tuple[int, ...]] | None:
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


def _same(x: np.ndarray, y: np.ndarray, rule: str, atol: float | None) -> np.ndarray:
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
    bads = [~_same(x, y, rule, atol) for _, x, y in pairs]
    found = _first_bad(bads, nlead, where)
    if found is None:
        return None
    n, index = found
    path, x, y = pairs[n]
    leaf, lead, inner = jax.tree_util.keystr(path), index[:nlead], index[nlead:]
    at = _at(position(lead, axes, first_step))
    if root is not None:
        rows = f" ({root}{leaf} there: {summarize(x[lead])} {labels[0]}, {summarize(y[lead])} {labels[1]})"
        name = f"{root}{leaf}{element(inner)}"
        return f"{name}{at} is {value(x[index])} {labels[0]}, {value(y[index])} {labels[1]}{rows if inner else ''}"
    rows = f" ({labels[0]}{leaf} there: {summarize(x[lead])}, {labels[1]}{leaf} there: {summarize(y[lead])})"
    first, second = (f"{label}{leaf}{element(inner)}" for label in labels)
    return f"{first}{at} is {value(x[index])}, but {second} is {value(y[index])}{rows if inner else ''}"


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
    found = _first_bad(bads, nlead)
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
    return f"{leaf_name}{element(inner)}{_at(position(lead, axes, first_step))} is {value(v)}, {why} of {sub!r}{rows}"


def batch_shape(env: Environment[Any, Any, Any]) -> tuple[int, ...]:
    """``()`` for a single environment, ``(num_envs,)`` for a batched one."""
    return () if env.num_envs is None else (env.num_envs,)


def avals(tree: Any) -> list[tuple[str, tuple[int, ...], str, bool]]:
    """(path, shape, dtype, weak_type) of every leaf."""
    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    return [
        (jax.tree_util.keystr(p), tuple(x.shape), str(x.dtype), bool(getattr(x, "weak_type", False))) for p, x in leaves
    ]


def same_structure(a: Any, b: Any, what: str) -> None:
    """Fail unless ``a`` and ``b`` have one pytree structure, shapes, dtypes and weak types."""
    ta: Any = jax.tree.structure(a)
    tb: Any = jax.tree.structure(b)
    require(ta == tb, f"{what}: pytree structures differ:\n  {ta}\n  {tb}")
    for la, lb in zip(avals(a), avals(b)):
        require(la == lb, f"{what}: leaf {la[0]} differs: shape/dtype/weak_type {la[1:]} vs {lb[1:]}")


def trees_close(a: Any, b: Any, atol: float) -> bool:
    """Whether two pytrees have one structure and leaves equal within ``atol`` (NaN equals NaN)."""
    structure: Any = jax.tree.structure(a)
    if structure != jax.tree.structure(b):
        return False
    return all(
        np.all(_same(np.asarray(x, np.float64), np.asarray(y, np.float64), "close", atol))
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))
    )


def leaf_equal(a: Any, b: Any, batch_ndim: int, atol: float | None = None) -> np.ndarray:
    """Per-transition equality of two pytrees whose leaves lead with (time, *batch).

    Floats are equal when bit-identical, or with ``atol`` within ``atol`` plus a relative 1e-5
    (values from two different compiled programs may differ by rounding); NaN equals NaN.
    """
    eq = None
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        same = _same(np.asarray(x), np.asarray(y), "equal", atol)
        same = np.all(same, axis=tuple(range(1 + batch_ndim, x.ndim)))
        eq = same if eq is None else eq & same
    assert eq is not None
    return eq


def space_mismatch(space: spaces.Space, tree: Any, name: str) -> str | None:
    """Describe how ``tree`` (arrays or ``jax.ShapeDtypeStruct``s) is not exactly of ``space``, else ``None``.

    Exactly: the space's pytree structure, and each leaf the shape and dtype of its space leaf (not
    only the dtype kind, as ``contains`` checks). ``name`` names ``tree`` in the message, which
    calls ``space`` the observation space.
    """
    expected: Any
    if isinstance(space, spaces.Tree):
        expected, leaves = space.treedef, space.leaves
    else:
        expected, leaves = jax.tree.structure(0), [space]
    structure: Any = jax.tree.structure(tree)
    if structure != expected:
        return f"{name} has pytree structure {structure}, but the observation space has {expected}"
    for (path, value), leaf in zip(jax.tree_util.tree_flatten_with_path(tree)[0], leaves):
        value = value if hasattr(value, "dtype") else np.asarray(value)  # a Python scalar
        shape, dtype = tuple(value.shape), np.dtype(value.dtype)
        if (shape, dtype) != (tuple(leaf.shape), leaf.dtype):
            return (
                f"{name}{jax.tree_util.keystr(path)} is {dtype} of shape {shape}, "
                f"but its space {leaf!r} holds {leaf.dtype} of shape {tuple(leaf.shape)}"
            )
    return None


__all__ = [
    "mask_problem",
    "check_reward_structure",
    "CheckFailure",
    "CheckSkipped",
    "avals",
    "batch_shape",
    "leaf_equal",
    "require",
    "same_structure",
    "space_mismatch",
    "space_violation",
    "summarize",
    "summarize_tree",
    "tree_difference",
    "trees_close",
]


def check_reward_structure(env: Environment[Any, Any, Any], reward: Any) -> None:
    """One reward array, or (multi-agent) a dict keyed by the names in ``env.agents`` (docs/multi-agent.md).

    JAX rebuilds a dict with its keys sorted, so the keys are compared as a set, not in ``env.agents``' order.
    """
    if not env.agents:
        require(
            not isinstance(reward, dict),
            f"reward is a dict {sorted(reward) if isinstance(reward, dict) else ''} but env.agents is ()",
        )
        return
    require(
        isinstance(env.agents, tuple) and all(isinstance(a, str) for a in env.agents),
        f"env.agents is {env.agents!r}, not a tuple of names",
    )
    require(len(set(env.agents)) == len(env.agents), f"env.agents {env.agents} names an agent twice")
    require(
        isinstance(reward, dict) and sorted(reward) == sorted(env.agents),
        f"a multi-agent reward must be a dict keyed by env.agents {env.agents}, got "
        f"{sorted(reward) if isinstance(reward, dict) else type(reward).__name__}",
    )


def mask_problem(env: Environment[Any, Any, Any], obs: Any, axes: Sequence[str] = ()) -> str | None:
    """Why the legal-action masks in ``obs`` (leaves named ``legal_action_mask``, per agent or not; any leading
    axes, named by ``axes`` where given) break the contract (docs/multi-agent.md), or None: bool, one entry per
    action, some action legal."""
    for path, mask in jax.tree_util.tree_flatten_with_path(obs)[0]:
        if not path or getattr(path[-1], "key", None) != "legal_action_mask":
            continue
        space, name = env.single_action_space, f"obs{jax.tree_util.keystr(path)}"
        if len(path) > 1 and isinstance(space, spaces.Tree):
            space = space[getattr(path[0], "key", None)]  # a simultaneous env's agent
        mask = np.asarray(mask)
        if mask.dtype != np.bool_:
            return f"{name} is {mask.dtype}, not bool"
        n = getattr(space, "n", None)
        if n is not None and mask.shape[-1] != n:
            return f"{name} has {mask.shape[-1]} entries for the {n} actions of {space!r}"
        stuck = ~np.any(mask, axis=-1)
        if np.any(stuck):
            index = tuple(int(i) for i in np.argwhere(stuck)[0])
            named = min(len(axes), len(index))
            at = _at(position(index[:named], axes[:named]))
            return f"{name}{element(index[named:])}{at} allows no action at all: {summarize(mask[index])}"
    return None
