"""The action check every backend shares: structure, shape and dtype at trace time; values where they are free.

``check_action`` runs while tracing and costs nothing at run time. ``check_values`` is the rule for
values, the same on every backend: an out-of-range ``Discrete``/``MultiDiscrete`` value or a
non-finite value in a float ``Box`` is an ``ActionError`` (out-of-bounds finite ``Box`` values are
left to the backend, which clips them). On concrete arrays it raises at once. Traced, it adds
nothing to the program by default, so the program stays pure XLA (cacheable by JAX's persistent
cache, serializable by ``jax.export``, which refuses a checkify effect). Traced inside
``report_in_jit()`` (``envhub.checked`` is inside it), it adds a ``checkify.debug_check`` per checked
leaf, which ``checkify.checkify(fn, errors=checkify.user_checks)`` reports. The setting is a
``jax.make_user_context``, part of jit's cache key: a function traced outside it is traced again
inside it, never reused without its checks.

``hard_stop=True`` (``validate_actions="strict"``) instead reduces the whole action to one bool and
branches with ``lax.cond`` to a host callback that raises only when that bool is true. The bool is
reduced over ``jax.vmap`` axes too (``_any_unbatched``), so vmap never turns the branch into a select
that would run the callback for every action. The callback makes the program uncacheable and
unexportable: it is the opt-in, not the default (docs/errors.md, "Action values").
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from envhub import spaces
from envhub.errors import ActionError

VALUES_FIX = (
    "pass values inside the space (e.g. env.action_space.sample(key)); "
    "envhub.make(..., validate_actions=False) skips this check"
)


def check_action(env_id: str, space: spaces.Space, action: Any) -> Any:
    """Check ``action`` against ``space`` at trace time and cast it to the space's dtype.

    Raises:
        ActionError: wrong pytree structure, wrong shape, or floats for an integer space.
    """
    if isinstance(space, spaces.Tree):
        try:
            leaves = space.treedef.flatten_up_to(action)
        except (ValueError, TypeError) as exc:
            raise ActionError(env_id, f"structure does not match ({exc})", space) from None
        return space.treedef.unflatten([check_action(env_id, s, a) for s, a in zip(space.leaves, leaves)])
    try:
        array = jnp.asarray(action)
    except (TypeError, ValueError):  # jax says ValueError for None, TypeError for strings
        raise ActionError(env_id, f"{action!r} is not an array", space) from None
    if array.shape != space.shape:
        raise ActionError(env_id, f"shape {array.shape} where {space.shape} is needed", space)
    kind = array.dtype.kind
    if space.dtype.kind in "iu" and kind not in "iub":
        raise ActionError(env_id, f"dtype {array.dtype.name} where integers are needed", space)
    if space.dtype.kind == "f" and kind not in "fiub":
        raise ActionError(env_id, f"dtype {array.dtype.name} where floats are needed", space)
    return array if array.dtype == space.dtype else array.astype(space.dtype)


def check_values(env_id: str, space: spaces.Space, action: Any, *, hard_stop: bool = False) -> Any:
    """Return ``action`` (already through ``check_action``) once its values are valid; see the module docstring.

    Raises:
        ActionError: eagerly, for concrete arrays. Traced, nothing is raised unless ``hard_stop``
            (then from a host callback, which JAX re-raises wrapped); inside ``report_in_jit()``
            checkify reports it.
    """
    parts = _parts(space)
    if not parts:
        return action
    leaves = space.treedef.flatten_up_to(action) if isinstance(space, spaces.Tree) else [action]
    if not any(isinstance(x, jax.core.Tracer) for x in leaves):
        problem = value_problem(space, leaves)
        if problem is not None:
            raise ActionError(env_id, problem, space, fix=VALUES_FIX)
        return action
    if not hard_stop:
        if _reporting():
            for path, sub, index in parts:
                _debug_check(env_id, space, path, sub, leaves[index])
        return action
    out = list(_stop_on_host(env_id, space, parts)(*leaves))
    return space.treedef.unflatten(out) if isinstance(space, spaces.Tree) else out[0]


def _debug_check(env_id: str, space: spaces.Space, path: str, sub: spaces.Space, x: Any) -> None:
    """A ``checkify.debug_check`` of one leaf, worded as ``value_problem`` words it eagerly."""
    bad = _invalid(sub, x, jnp)
    flat = jnp.ravel(bad)
    if not flat.size:
        return
    first = jnp.argmax(flat)
    args: dict[str, Any] = {"value": jnp.ravel(x)[first], "count": jnp.sum(flat)}
    at = f" in {_braces(path)}" if path else ""
    if jnp.ndim(x):
        index = jnp.unravel_index(first, jnp.shape(x))
        args.update({f"i{d}": i for d, i in enumerate(index)})
        at += " at index (" + ", ".join(f"{{i{d}}}" for d in range(len(index))) + ("," if len(index) == 1 else "") + ")"
    if isinstance(sub, spaces.MultiDiscrete):
        lo, hi = _range(sub)
        if np.ndim(lo):
            args["lo"], args["hi"] = (jnp.ravel(jnp.broadcast_to(b, jnp.shape(x)))[first] for b in (lo, hi))
            rule = "is outside [{lo}, {hi})"
        else:
            rule = f"is outside [{lo}, {hi})"
    else:
        rule = "is not finite"
    count = f"{{count}} of {flat.size} values" if flat.size > 1 else "1 value"
    head, tail = str(ActionError(env_id, "\0", space, fix=VALUES_FIX)).split("\0")  # the error's own wording
    message = f"{_braces(head)}{{value}}{at} {rule} ({count} invalid){_braces(tail)}"
    checkify.debug_check(~jnp.any(bad), message, **args)


def checked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``jax.jit(fn)`` with the in-jit action checks on: an invalid action value raises ``ActionError``.

    ``fn`` runs as ``jax.jit(checkify.checkify(fn, errors=checkify.user_checks))``, traced inside
    ``report_in_jit()``; after each call the first failed check is raised: an ``ActionError`` (same
    message as eagerly) for an action value, checkify's own error for any other user check. The
    program stays pure XLA; the cost is the reductions and the error outputs
    (``benchmarks/action_validation.py``).
    """
    if not callable(fn):
        raise TypeError(f"envhub.checked needs a callable (e.g. env.step or a rollout function), got {fn!r}")
    run = jax.jit(checkify.checkify(fn, errors=checkify.user_checks))

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with report_in_jit():
            error, out = run(*args, **kwargs)
        message = error.get()
        if message is not None:
            if message.startswith(ActionError.PREFIX):
                raise ActionError.from_message(message.removesuffix(_CHECKIFY_SUFFIX))
            error.throw()
        return out

    return call


# Whether traced steps add the checkify checks. A jax.make_user_context (jax >= 0.7) is part of jit's
# cache key, so a function traced outside report_in_jit() is traced again inside it; older jax gets
# only the context variable (a jitted function traced outside is then reused without the checks).
_REPORT: Any = jax.make_user_context(default_value=False) if hasattr(jax, "make_user_context") else None
_REPORT_VAR: contextvars.ContextVar[bool] = contextvars.ContextVar("envhub_report_in_jit", default=False)


def _reporting() -> bool:
    return bool(_REPORT.value) if _REPORT is not None else _REPORT_VAR.get()


@contextlib.contextmanager
def report_in_jit() -> Iterator[None]:
    """Inside, traced ``step``s add the checkify checks of action values (``envhub.checked`` uses it)."""
    token = _REPORT_VAR.set(True)
    try:
        if _REPORT is None:
            yield
        else:
            with _REPORT(True):
                yield
    finally:
        _REPORT_VAR.reset(token)


#: What checkify appends to a failed ``debug_check``'s message.
_CHECKIFY_SUFFIX = " (`check` failed)"


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _stop_on_host(env_id: str, space: spaces.Space, parts: list[tuple[str, spaces.Space, int]]) -> Callable[..., Any]:
    """The hard stop: one ``lax.cond`` to a host callback that raises ``ActionError`` (module docstring)."""

    def raise_on_host(*host_leaves: Any) -> tuple[Any, ...]:
        problem = value_problem(space, host_leaves)
        if problem is not None:
            raise ActionError(env_id, problem, space, fix=VALUES_FIX)
        return tuple(np.asarray(x) for x in host_leaves)

    @jax.custom_jvp
    def checked(*xs: Any) -> tuple[Any, ...]:
        invalid = jnp.asarray(False)
        for _, sub, index in parts:
            invalid = invalid | jnp.any(_invalid(sub, xs[index], jnp))
        shapes = tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in xs)

        def fire(*ys: Any) -> tuple[Any, ...]:
            return tuple(jax.pure_callback(raise_on_host, shapes, *ys, vmap_method="expand_dims"))

        return tuple(jax.lax.cond(_any_unbatched(invalid), fire, lambda *ys: ys, *xs))

    @checked.defjvp
    def _(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        return checked(*primals), tangents  # the check does not change the values: the identity's tangents

    return checked


def host_value_checker(env_id: str, space: spaces.Space) -> Callable[[Any], None]:
    """``check_values`` for actions still on the host, before a program traced under
    ``envhub.env.values_checked_by_caller`` runs them; built once per space (the exports call it per
    step, a few microseconds). An action ``check_action`` refuses while tracing (structure, dtype) is
    left to it. The returned function raises ``ActionError`` with the same message as inside ``jit``.
    """
    tree = space.treedef if isinstance(space, spaces.Tree) else None
    parts = [(i, _range(sub) if isinstance(sub, spaces.MultiDiscrete) else None) for _, sub, i in _parts(space)]

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


def value_problem(space: spaces.Space, leaves: Any) -> str | None:
    """The first invalid value of NumPy-convertible ``leaves`` (of ``space``), said in words, or None."""
    for path, sub, index in _parts(space):
        x = np.asarray(leaves[index])
        bad = np.asarray(_invalid(sub, x, np))
        if not bad.any():
            continue
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        value = x[where].item() if where else x.item()
        count = f"{int(bad.sum())} of {bad.size} values" if bad.size > 1 else "1 value"
        at = (f" in {path}" if path else "") + (f" at index {where}" if where else "")
        if isinstance(sub, spaces.MultiDiscrete):
            lo, hi = (np.broadcast_to(b, x.shape)[where].item() for b in _range(sub))
            rule = f"is outside [{lo}, {hi})"
        else:
            rule = "is not finite"
        return f"{value!r}{at} {rule} ({count} invalid)"
    return None


def _parts(space: spaces.Space) -> list[tuple[str, spaces.Space, int]]:
    """``(path, leaf space, leaf index)`` of every leaf whose values need checking."""
    if isinstance(space, spaces.Tree):
        flat, _ = jax.tree_util.tree_flatten_with_path(space.spaces, is_leaf=lambda s: isinstance(s, spaces.Space))
        paths = [jax.tree_util.keystr(p) for p, _ in flat]
        return [(p, s, i) for i, (p, s) in enumerate(zip(paths, space.leaves)) if _checked(s)]
    return [("", space, 0)] if _checked(space) else []


def _checked(space: spaces.Space) -> bool:
    return isinstance(space, spaces.MultiDiscrete) or (isinstance(space, spaces.Box) and space.dtype.kind == "f")


def _invalid(space: spaces.Space, x: Any, xp: Any) -> Any:
    """Elementwise: where ``x`` breaks ``space``'s value rule (``xp`` is numpy or jax.numpy)."""
    if isinstance(space, spaces.MultiDiscrete):
        lo, hi = _range(space)
        return (x < lo) | (x >= hi)
    return ~xp.isfinite(x)


def _range(space: spaces.MultiDiscrete) -> tuple[Any, Any]:
    """``[start, start + nvec)`` as small constants: scalars when uniform, one row when a batch repeats it."""
    lo, hi = space.start, space.start + space.nvec
    if lo.size and (lo == lo.flat[0]).all() and (hi == hi.flat[0]).all():
        return lo.flat[0].item(), hi.flat[0].item()
    while lo.ndim > 1 and (lo == lo[:1]).all() and (hi == hi[:1]).all():
        lo, hi = lo[0], hi[0]
    return lo, hi


@jax.custom_batching.custom_vmap
def _any_unbatched(pred: jax.Array) -> jax.Array:
    """``jnp.any(pred)``, reduced over every ``jax.vmap`` axis too, so the result is never batched."""
    return jnp.any(pred)


@_any_unbatched.def_vmap
def _(axis_size: int, in_batched: list[bool], pred: jax.Array) -> tuple[jax.Array, bool]:
    return _any_unbatched(jnp.any(pred)), False  # the outer call reduces any enclosing vmap the same way


__all__ = ["check_action", "checked", "host_value_checker", "report_in_jit", "check_values", "value_problem"]
