"""``envhub.checked``: a function compiled with the in-jit action checks, raising ``ActionError``
(``checking`` says where checks run; this is the opt-in that reports them from compiled code)."""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import jax
from jax._src import checkify as checkify_internals
from jax.experimental import checkify

from envhub.core.checking import CHECKIFY_SUFFIX, STOP, report_in_jit
from envhub.errors import ActionError, InvalidArgumentError


def checked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``jax.jit(fn)`` with the in-jit action checks on: an invalid action value raises ``ActionError``.

    ``fn`` runs as ``jax.jit(checkify.checkify(fn, errors=checkify.user_checks))``, traced inside
    ``report_in_jit()``; after each call the first failed check is raised: an ``ActionError`` (same
    message as eagerly) for an action value, checkify's own error for any other user check. The
    program stays pure XLA; the cost is the reductions and the error outputs
    (``benchmarks/action_validation.py``). A host env refuses in its own callback: the ``ActionError`` JAX wraps
    in its runtime error is raised as itself.

    Raises:
        ActionError: an invalid action value, on every backend.
        InvalidArgumentError: ``fn`` is not callable; or called while traced (``jax.jit(envhub.checked(fn))``,
            under ``vmap`` or ``scan``): ``checked`` compiles ``fn`` itself and raises from concrete results, so it
            must be the outermost call.
    """
    if not callable(fn):
        raise InvalidArgumentError(
            f"envhub.checked needs a callable, not {type(fn).__name__} {fn!r:.60}: pass the function to compile, "
            "e.g. envhub.checked(env.step) or envhub.checked(lambda key: envhub.rollout(env, policy, key, 100))."
        )
    checkified = checkify.checkify(fn, errors=checkify.user_checks)

    def numbered(*args: Any, **kwargs: Any) -> Any:  # runs only while jit traces: no cost per call
        with _checkify_codes_from_one():
            return checkified(*args, **kwargs)

    run = jax.jit(numbered)
    stop = jax.jit(fn)
    checkify_works = [True]

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if checkify_works[0]:
            try:
                with report_in_jit():
                    error, out = run(*args, **kwargs)
            except (jax.errors.JaxRuntimeError, ValueError, RuntimeError) as exc:
                if "batched while" not in str(exc):
                    _raise_action_error(exc)
                checkify_works[0] = False
            else:
                _refuse_traced(fn, error, out)
                message = error.get()
                if message is not None:
                    if message.startswith(ActionError.PREFIX):
                        raise ActionError.from_message(message.removesuffix(CHECKIFY_SUFFIX))
                    error.throw()
                return out
        # checkify cannot transform a jax.vmap of a while loop (a batched brax or MuJoCo step): the
        # checks become the strict hard stop for this function, and its error is raised as ours
        with report_in_jit(STOP):
            try:
                out = stop(*args, **kwargs)
            except (jax.errors.JaxRuntimeError, ValueError, RuntimeError) as exc:
                _raise_action_error(exc)
            _refuse_traced(fn, out)
            return out

    return call


def _raise_action_error(exc: BaseException) -> NoReturn:
    """Raise the ``ActionError`` JAX wrapped in its runtime error (a host callback's: the strict stop's, a host
    env's), else ``exc`` itself."""
    text = str(exc)
    if ActionError.PREFIX not in text:
        raise exc
    message = ActionError.PREFIX + text.split(ActionError.PREFIX, 1)[1].split("\n", 1)[0]
    raise ActionError.from_message(message) from None


def _refuse_traced(fn: Callable[..., Any], *results: Any) -> None:
    """Raise when ``checked`` itself runs under a JAX transformation: the leaves of the first of ``results`` that has
    any (checkify's few error leaves, before the function's own) are tracers."""
    leaves = next((x for x in map(jax.tree.leaves, results) if x), [])
    if any(isinstance(x, jax.core.Tracer) for x in leaves):
        raise InvalidArgumentError(
            f"envhub.checked({getattr(fn, '__name__', fn)!s}) was called with traced values (inside jax.jit, "
            f"jax.vmap, lax.scan, ...): checked already compiles the function and raises from its results, so it "
            f"must be the outermost call: use envhub.checked(fn) instead of jax.jit(envhub.checked(fn)), and put "
            f"vmap or scan inside fn."
        )


_CODES = threading.Lock()


@contextlib.contextmanager
def _checkify_codes_from_one() -> Iterator[None]:
    """Number checkify's checks from 1 in this trace: jax 0.10 takes each check's code (a constant in the
    program) from a process-wide counter, so a program would miss JAX's persistent cache in another process."""
    with _CODES:
        process_wide = getattr(checkify_internals, "next_code", None)
        checkify_internals.next_code = itertools.count(1).__next__  # harmless where jax no longer reads it
        try:
            yield
        finally:
            if process_wide is not None:
                checkify_internals.next_code = process_wide


__all__ = ["checked"]
