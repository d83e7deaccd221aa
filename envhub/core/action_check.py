"""The rules of a valid action, shared by every backend and every place that checks one.

``check_action`` runs while tracing (structure, shape, dtype) and costs nothing at run time. The
rule for values is the same everywhere: an out-of-range ``Discrete``/``MultiDiscrete`` value or a
non-finite value in a float ``Box`` is an ``ActionError`` (out-of-bounds finite ``Box`` values are
left to the backend, which clips them). ``value_problem`` words it; ``host_value_checker`` applies
it to actions on the host, and ``host_action_checker`` both rules (the exports, before their compiled step). Where values are checked (eagerly, in jit, on the host) is
``envhub.core.checking``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.errors import ActionError

VALUES_FIX = (
    "pass values inside the space (e.g. env.action_space.sample(key)); "
    "envhub.make(..., validate_actions=False) skips this check"
)
STRUCTURE_FIX = "pass one action per entry of the action space, no more (e.g. env.action_space.sample(key))"


def check_action(env_id: str, space: spaces.Space, action: Any, *, on_host: bool = False) -> Any:
    """Check ``action`` against ``space`` at trace time and cast it to the space's dtype.

    ``on_host=True``: the same rule on the host, with NumPy; the arrays come back uncast (``host_action_checker``
    casts them after the value check, so that a value the cast would wrap is refused).

    Raises:
        ActionError: wrong pytree structure (naming missing and unknown keys), wrong shape, floats for an integer
            space, bools for an integer or float space, or not numbers; for a leaf of a ``Tree``, the message names
            its path (e.g. ``['agent_0']``).
    """
    if not isinstance(space, spaces.Tree):
        return _checked_leaf(env_id, space, action, on_host)
    try:
        leaves = space.treedef.flatten_up_to(action)
    except (ValueError, TypeError) as exc:
        raise ActionError(env_id, _structure_problem(space, action, exc), space, fix=STRUCTURE_FIX) from None
    checked = [_checked_leaf(env_id, s, a, on_host, (space, i)) for i, (s, a) in enumerate(zip(space.leaves, leaves))]
    return space.treedef.unflatten(checked)


def _checked_leaf(env_id: str, space: spaces.Space, action: Any, on_host: bool, where: Any = None) -> Any:
    """One leaf through the rule; ``where``: ``(tree, leaf index)`` of a ``Tree``'s leaf, named in the messages."""
    try:
        array = np.asarray(action) if on_host else jnp.asarray(action)
    except (TypeError, ValueError):  # jax says ValueError for None, TypeError for strings
        raise ActionError(env_id, f"{_at(where)}{action!r} is not an array", space) from None
    except OverflowError:  # a Python int too large for jax's 32-bit integers
        raise ActionError(
            env_id, f"{_at(where)}{action!r} does not fit a 32-bit integer", space, fix=VALUES_FIX
        ) from None
    kind = array.dtype.kind
    if kind not in "biufc":  # NumPy holds None or text as objects or strings; jax refuses them above
        raise ActionError(env_id, f"{_at(where)}{action!r} is not an array", space)
    if array.shape != space.shape:
        raise ActionError(env_id, f"{_at(where)}shape {array.shape} where {space.shape} is needed", space)
    want = "integers" if space.dtype.kind in "iu" and kind not in "iu" else None
    if space.dtype.kind == "f" and kind not in "fiu":
        want = "floats"
    if want is not None:  # a bool is not a number here: True would silently be action 1 (or 1.0)
        dtype = np.dtype(jax.dtypes.canonicalize_dtype(array.dtype)).name  # as jax holds it, on the host too
        concrete = isinstance(action, (np.ndarray, np.generic, jax.Array)) and not isinstance(action, jax.core.Tracer)
        scalar = action.item() if concrete and action.size == 1 else action
        value = f"{scalar!r} has " if isinstance(scalar, (bool, int, float, complex)) else ""
        cast = "int" if want == "integers" else "float"
        fix = (
            f"pass {want}, not bools (e.g. {cast}(action), or action.astype({cast}) for an array)"
            if kind == "b"
            else ""
        )
        raise ActionError(env_id, f"{_at(where)}{value}dtype {dtype} where {want} are needed", space, fix=fix)
    return array if on_host or array.dtype == space.dtype else array.astype(space.dtype)


def _at(where: Any) -> str:
    """``at action['agent_0']: `` for a ``Tree``'s leaf (read only on errors: finding the path costs microseconds)."""
    return f"at action{_leaf_paths(where[0])[where[1]]}: " if where is not None else ""


def _structure_problem(space: spaces.Tree, action: Any, exc: Exception) -> str:
    """Why ``action`` does not have ``space``'s structure: the missing and unknown keys of a dict, else JAX's words."""
    if isinstance(space.spaces, dict) and isinstance(action, Mapping):
        missing = [k for k in space.spaces if k not in action]
        unknown = [k for k in action if k not in space.spaces]
        parts = [f"no action for {missing}"] * bool(missing) + [f"unknown keys {unknown}"] * bool(unknown)
        if parts:
            return f"structure does not match: {' and '.join(parts)} (the keys are {list(space.spaces)})"
    elif isinstance(space.spaces, dict):  # e.g. one array for all agents: say what it is, not its every value
        shape = getattr(action, "shape", None)
        if shape is not None:
            given = f"an array of shape {tuple(shape)}"
        elif isinstance(action, (list, tuple)):
            given = f"a {type(action).__name__} of {len(action)}"
        else:
            given = f"{action!r:.40} ({type(action).__name__})"
        return f"structure does not match: {given} where a dict with the keys {list(space.spaces)} is needed"
    return f"structure does not match ({exc})"


def _leaf_paths(space: spaces.Tree) -> list[str]:
    """Each leaf's path in ``space``, as ``jax.tree_util.keystr`` writes it (``['agent_0']``)."""
    flat, _ = jax.tree_util.tree_flatten_with_path(space.spaces, is_leaf=lambda s: isinstance(s, spaces.Space))
    return [jax.tree_util.keystr(p) for p, _ in flat]


def host_action_checker(env_id: str, space: spaces.Space) -> Callable[[Any, bool], Any]:
    """``(action, values) -> NumPy action`` for an action on the host (the exports, before their compiled step): the
    rule of ``env.step`` with its errors (``check_action``, then, when ``values``, ``host_value_checker``), cast to
    the space's dtypes last.
    """
    check_values = host_value_checker(env_id, space)
    tree = space if isinstance(space, spaces.Tree) else None

    def check(action: Any, values: bool) -> Any:
        action = check_action(env_id, space, action, on_host=True)
        if values:
            check_values(action)
        if tree is None:
            return action if action.dtype == space.dtype else action.astype(space.dtype)
        leaves = tree.treedef.flatten_up_to(action)
        return tree.treedef.unflatten(
            [x if x.dtype == s.dtype else x.astype(s.dtype) for x, s in zip(leaves, tree.leaves)]
        )

    return check


def host_value_checker(env_id: str, space: spaces.Space) -> Callable[[Any], None]:
    """``check_values`` for actions still on the host, before a program traced under
    ``envhub.core.env.values_checked_by_caller`` runs them; built once per space (the exports call it per
    step, a few microseconds). An action ``check_action`` refuses while tracing (structure, dtype) is
    left to it. The returned function raises ``ActionError`` with the same message as inside ``jit``.
    """
    tree = space.treedef if isinstance(space, spaces.Tree) else None
    parts = [
        (i, value_range(sub) if isinstance(sub, spaces.MultiDiscrete) else None) for _, sub, i in leaves_to_check(space)
    ]

    def check(action: Any) -> None:
        try:
            leaves = tree.flatten_up_to(action) if tree is not None else (action,)
            if all(_valid_on_host(leaves[i], bounds) for i, bounds in parts):
                return
            problem = value_problem(space, leaves)
        except (TypeError, ValueError):  # not arrays of numbers: check_action says so while tracing
            return
        if problem is not None:
            raise ActionError(env_id, problem, space, fix=VALUES_FIX)

    return check


def _valid_on_host(x: Any, bounds: tuple[Any, Any] | None) -> bool:
    if bounds is None:  # a float Box: finite values
        return math.isfinite(x) if isinstance(x, float) else bool(np.isfinite(x).all())
    lo, hi = bounds
    if isinstance(lo, int) and np.ndim(x) == 0:  # one discrete action: Python's compare is the fastest
        return bool(lo <= int(x) < hi)
    x = np.asarray(x)
    return not bool(((x < lo) | (x >= hi)).any())


def any_invalid(space: spaces.Space, action: Any) -> jax.Array:
    """Traced or not: one bool, true when ``action`` (a whole action of ``space``) holds a value the rule refuses."""
    leaves = space.treedef.flatten_up_to(action) if isinstance(space, spaces.Tree) else [action]
    invalid = jnp.asarray(False)
    for _, sub, index in leaves_to_check(space):
        invalid = invalid | jnp.any(invalid_mask(sub, leaves[index], jnp))
    return invalid


def value_problem(space: spaces.Space, leaves: Any) -> str | None:
    """The first invalid value of NumPy-convertible ``leaves`` (of ``space``), said in words, or None."""
    for path, sub, index in leaves_to_check(space):
        x = np.asarray(leaves[index])
        bad = np.asarray(invalid_mask(sub, x, np))
        if not bad.any():
            continue
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        value = x[where].item() if where else x.item()
        count = f"{int(bad.sum())} of {bad.size} values" if bad.size > 1 else "1 value"
        at = (f" in {path}" if path else "") + (f" at index {where}" if where else "")
        if isinstance(sub, spaces.MultiDiscrete):
            lo, hi = (np.broadcast_to(b, x.shape)[where].item() for b in value_range(sub))
            rule = f"is outside [{lo}, {hi})"
        else:
            rule = "is not finite"
        return f"{value!r}{at} {rule} ({count} invalid)"
    return None


def leaves_to_check(space: spaces.Space) -> list[tuple[str, spaces.Space, int]]:
    """``(path, leaf space, leaf index)`` of every leaf whose values need checking."""
    if isinstance(space, spaces.Tree):
        return [(p, s, i) for i, (p, s) in enumerate(zip(_leaf_paths(space), space.leaves)) if _checked(s)]
    return [("", space, 0)] if _checked(space) else []


def _checked(space: spaces.Space) -> bool:
    return isinstance(space, spaces.MultiDiscrete) or (isinstance(space, spaces.Box) and space.dtype.kind == "f")


def invalid_mask(space: spaces.Space, x: Any, xp: Any) -> Any:
    """Elementwise: where ``x`` breaks ``space``'s value rule (``xp`` is numpy or jax.numpy)."""
    if isinstance(space, spaces.MultiDiscrete):
        lo, hi = value_range(space)
        return (x < lo) | (x >= hi)
    return ~xp.isfinite(x)


def value_range(space: spaces.MultiDiscrete) -> tuple[Any, Any]:
    """``[start, start + nvec)`` as small constants: scalars when uniform, one row when a batch repeats it."""
    lo, hi = space.start, space.start + space.nvec
    if lo.size and (lo == lo.flat[0]).all() and (hi == hi.flat[0]).all():
        return lo.flat[0].item(), hi.flat[0].item()
    while lo.ndim > 1 and (lo == lo[:1]).all() and (hi == hi[:1]).all():
        lo, hi = lo[0], hi[0]
    return lo, hi


__all__ = [
    "STRUCTURE_FIX",
    "VALUES_FIX",
    "any_invalid",
    "check_action",
    "host_action_checker",
    "host_value_checker",
    "invalid_mask",
    "leaves_to_check",
    "value_problem",
    "value_range",
]
