"""Host-side comparisons the checks share, and the two ways a check can end early."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub import spaces
from envhub.env import Environment


class CheckFailure(AssertionError):
    """A conformance check found a violation of the envhub contract."""


class CheckSkipped(Exception):
    """A conformance check does not apply to this environment; the message says why."""


def require(condition: Any, message: str) -> None:
    """Raise ``CheckFailure(message)`` unless ``condition`` holds."""
    if not bool(condition):
        raise CheckFailure(message)


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
        np.allclose(np.asarray(x, np.float64), np.asarray(y, np.float64), atol=atol, equal_nan=True)
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))
    )


def leaf_equal(a: Any, b: Any, batch_ndim: int, atol: float | None = None) -> np.ndarray:
    """Per-transition equality of two pytrees whose leaves lead with (time, *batch).

    Floats are equal when bit-identical, or with ``atol`` within ``atol`` plus a relative 1e-5
    (values from two different compiled programs may differ by rounding); NaN equals NaN.
    """
    eq = None
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype.kind != "f":
            same = x == y
        elif atol is None:
            same = (x == y) | (np.isnan(x) & np.isnan(y))
        else:
            same = np.isclose(x, y, rtol=1e-5, atol=atol, equal_nan=True)
        same = np.all(same, axis=tuple(range(1 + batch_ndim, x.ndim)))
        eq = same if eq is None else eq & same
    assert eq is not None
    return eq


def dtype_mismatch(space: Any, tree: Any) -> str | None:
    """Describe the first leaf of ``tree`` whose dtype is not its space leaf's dtype, else ``None``."""
    leaves = space.leaves if isinstance(space, spaces.Tree) else [space]
    try:
        values = space.treedef.flatten_up_to(tree) if isinstance(space, spaces.Tree) else [tree]
    except (ValueError, TypeError):
        return f"its structure {jax.tree.structure(tree)} is not the space's {space.treedef}"
    for i, (leaf, value) in enumerate(zip(leaves, values)):
        dtype = np.asarray(value).dtype
        if dtype != leaf.dtype:
            return f"leaf {i} is {dtype}, but its space {leaf!r} holds {leaf.dtype}"
    return None
