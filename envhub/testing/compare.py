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
from envhub.testing.messages import at, element, position, same, summarize


class CheckFailure(AssertionError):
    """A conformance check found a violation of the envhub contract."""


class CheckSkipped(Exception):
    """A conformance check does not apply to this environment; the message says why."""


def require(condition: Any, message: str | Callable[[], str]) -> None:
    """Raise ``CheckFailure(message)`` unless ``condition`` holds; a callable ``message`` is called only then
    (for messages that search the arrays for the first failing value)."""
    if not bool(condition):
        raise CheckFailure(message() if callable(message) else message)


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
        np.all(same(np.asarray(x, np.float64), np.asarray(y, np.float64), "close", atol))
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))
    )


def leaf_equal(a: Any, b: Any, batch_ndim: int, atol: float | None = None) -> np.ndarray:
    """Per-transition equality of two pytrees whose leaves lead with (time, *batch).

    Floats are equal when bit-identical, or with ``atol`` within ``atol`` plus a relative 1e-5
    (values from two different compiled programs may differ by rounding); NaN equals NaN.
    """
    eq = None
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        alike = same(np.asarray(x), np.asarray(y), "equal", atol)
        alike = np.all(alike, axis=tuple(range(1 + batch_ndim, x.ndim)))
        eq = alike if eq is None else eq & alike
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
            where = at(position(index[:named], axes[:named]))
            return f"{name}{element(index[named:])}{where} allows no action at all: {summarize(mask[index])}"
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
    "trees_close",
]
