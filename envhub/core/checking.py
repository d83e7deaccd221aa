"""Where action values are checked, and how: the one home of that rule.

The rule itself (what is invalid, in which words) is ``envhub.core.action_check``. ``validate_actions``
(``True``, ``"strict"`` or ``False``) lives on the innermost env of a chain; the outermost wrapper's
``step`` checks once (``outermost_check``), against its own action space:

- concrete arrays (eager calls): ``check_values`` raises ``ActionError`` at once;
- traced, by default: nothing is added to the program, which stays pure XLA (cacheable by JAX's
  persistent cache, serializable by ``jax.export``, which refuses a checkify effect);
- traced inside ``report_in_jit()`` (``checked`` is): a ``checkify.debug_check`` per checked leaf,
  worded as the eager error, which ``checkify.checkify(fn, errors=checkify.user_checks)`` reports;
- traced with ``"strict"``: the whole action is reduced to one bool (over ``jax.vmap`` axes too,
  ``_any_unbatched``, so vmap never turns the branch into a select) and a ``lax.cond`` branches to a
  host callback that raises only when it is true. The callback makes the program uncacheable and
  unexportable: the opt-in, not the default;
- host environments check in their own host callback (``checks_values_on_host``), where it is free;
- callers that check on the host themselves (the exports) trace inside ``values_checked_by_caller``.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from envhub import spaces
from envhub.core import action_check
from envhub.core.action_check import VALUES_FIX, any_invalid, invalid_mask, leaves_to_check, value_range
from envhub.errors import ActionError, InvalidArgumentError


class Checked(Protocol):
    """What the checks read of an environment (``envhub.Environment`` has it): the innermost env."""

    @property
    def unwrapped(self) -> Any: ...


#: ``validate_actions="strict"``: also a hard stop inside ``jit`` (a host callback; docs/errors.md).
STRICT = "strict"
#: The innermost env of the step being validated: wrappers' inner ``step`` calls skip the value check.
_VALIDATING: contextvars.ContextVar[object] = contextvars.ContextVar("envhub_validating", default=None)
#: The innermost env whose caller checks action values on the host (``values_checked_by_caller``).
_CALLER_CHECKS: contextvars.ContextVar[object] = contextvars.ContextVar("envhub_caller_checks", default=None)


def validate_actions_value(value: Any) -> bool | str:
    """``value`` if it is a ``validate_actions`` setting (``True``, ``False`` or ``"strict"``).

    Raises:
        InvalidArgumentError: any other value.
    """
    if isinstance(value, bool) or value == STRICT:
        return value
    raise InvalidArgumentError(
        f"validate_actions={value!r} must be True (check eagerly and for checkify), "
        f"{STRICT!r} (also stop inside jit, through a host callback) or False."
    )


@contextlib.contextmanager
def outermost_check(env: Checked) -> Iterator[bool | str]:
    """Yield the ``validate_actions`` mode this ``step`` checks with (``False``: an outer wrapper or the
    caller checks, or checks are off); inside, the inner envs' steps skip the check."""
    root = env.unwrapped
    mode = root.validate_actions
    if _VALIDATING.get() is root or not mode:
        yield False
        return
    if mode == STRICT and not root.is_jax_native:
        mode = True  # a host env stops on the host already: no second stop that could strand its state
    token = _VALIDATING.set(root)
    try:
        yield mode
    finally:
        _VALIDATING.reset(token)


@contextlib.contextmanager
def values_checked_by_caller(env: Checked) -> Iterator[None]:
    """Inside, ``env``'s steps skip every value check: the caller checks the values on the host
    (``envhub.core.action_check.host_value_checker``), e.g. an export stepping from Python."""
    tokens = _VALIDATING.set(env.unwrapped), _CALLER_CHECKS.set(env.unwrapped)
    try:
        yield
    finally:
        _VALIDATING.reset(tokens[0])
        _CALLER_CHECKS.reset(tokens[1])


def checks_values_on_host(env: Checked) -> bool:
    """Whether a host environment's traced ``step`` checks action values inside its own host callback
    (where the check is free): yes unless ``validate_actions=False`` or the caller checks them."""
    root = env.unwrapped
    return bool(root.validate_actions) and _CALLER_CHECKS.get() is not root


def check_values(env_id: str, space: spaces.Space, action: Any, *, hard_stop: bool = False) -> Any:
    """Return ``action`` (already through ``check_action``) once its values are valid; see the module docstring.

    Raises:
        ActionError: eagerly, for concrete arrays. Traced, nothing is raised unless ``hard_stop``
            (then from a host callback, which JAX re-raises wrapped); inside ``report_in_jit()``
            checkify reports it.
    """
    parts = leaves_to_check(space)
    if not parts:
        return action
    leaves = space.treedef.flatten_up_to(action) if isinstance(space, spaces.Tree) else [action]
    if not any(isinstance(x, jax.core.Tracer) for x in leaves):
        problem = action_check.value_problem(space, leaves)
        if problem is not None:
            raise ActionError(env_id, problem, space, fix=VALUES_FIX)
        return action
    reporting = _reporting()
    if not hard_stop and reporting != STOP:
        if reporting:
            for path, sub, index in parts:
                _debug_check(env_id, space, path, sub, leaves[index])
        return action
    out = list(_stop_on_host(env_id, space, parts)(*leaves))
    return space.treedef.unflatten(out) if isinstance(space, spaces.Tree) else out[0]


def _debug_check(env_id: str, space: spaces.Space, path: str, sub: spaces.Space, x: Any) -> None:
    """A ``checkify.debug_check`` of one leaf, worded as ``value_problem`` words it eagerly."""
    bad = invalid_mask(sub, x, jnp)
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
        lo, hi = value_range(sub)
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


# Whether traced steps add the checkify checks. A jax.make_user_context (jax >= 0.7) is part of jit's
# cache key, so a function traced outside report_in_jit() is traced again inside it; older jax gets
# only the context variable (a jitted function traced outside is then reused without the checks).
_REPORT: Any = jax.make_user_context(default_value=False) if hasattr(jax, "make_user_context") else None
_REPORT_VAR: contextvars.ContextVar[bool | str] = contextvars.ContextVar("envhub_report_in_jit", default=False)
STOP = "stop"  # report_in_jit(STOP): the checks are the strict hard stop (envhub.checked's fallback)


def _reporting() -> bool | str:
    return _REPORT.value if _REPORT is not None else _REPORT_VAR.get()


@contextlib.contextmanager
def report_in_jit(how: bool | str = True) -> Iterator[None]:
    """Inside, traced ``step``s add the checkify checks of action values (``envhub.checked`` uses it)."""
    token = _REPORT_VAR.set(how)
    try:
        if _REPORT is None:
            yield
        else:
            with _REPORT(how):
                yield
    finally:
        _REPORT_VAR.reset(token)


#: What checkify appends to a failed ``debug_check``'s message.
#: What checkify appends to a failed ``debug_check``'s message (``checked`` strips it).
CHECKIFY_SUFFIX = " (`check` failed)"


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _stop_on_host(env_id: str, space: spaces.Space, parts: list[tuple[str, spaces.Space, int]]) -> Callable[..., Any]:
    """The hard stop: one ``lax.cond`` to a host callback that raises ``ActionError`` (module docstring)."""

    def raise_on_host(*host_leaves: Any) -> tuple[Any, ...]:
        problem = action_check.value_problem(space, host_leaves)
        if problem is not None:
            raise ActionError(env_id, problem, space, fix=VALUES_FIX)
        return tuple(np.asarray(x) for x in host_leaves)

    @jax.custom_jvp
    def checked(*xs: Any) -> tuple[Any, ...]:
        invalid = any_invalid(space, space.treedef.unflatten(xs) if isinstance(space, spaces.Tree) else xs[0])
        shapes = tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in xs)

        def fire(*ys: Any) -> tuple[Any, ...]:
            return tuple(jax.pure_callback(raise_on_host, shapes, *ys, vmap_method="expand_dims"))

        return tuple(jax.lax.cond(_any_unbatched(invalid), fire, lambda *ys: ys, *xs))

    @checked.defjvp
    def _(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        return checked(*primals), tangents  # the check does not change the values: the identity's tangents

    return checked


@jax.custom_batching.custom_vmap
def _any_unbatched(pred: jax.Array) -> jax.Array:
    """``jnp.any(pred)``, reduced over every ``jax.vmap`` axis too, so the result is never batched."""
    return jnp.any(pred)


@_any_unbatched.def_vmap
def _(axis_size: int, in_batched: list[bool], pred: jax.Array) -> tuple[jax.Array, bool]:
    return _any_unbatched(jnp.any(pred)), False  # the outer call reduces any enclosing vmap the same way


__all__ = [
    "CHECKIFY_SUFFIX",
    "STOP",
    "STRICT",
    "Checked",
    "check_values",
    "checks_values_on_host",
    "outermost_check",
    "report_in_jit",
    "validate_actions_value",
    "values_checked_by_caller",
]
