"""``envhub.checked``: a function compiled with the in-jit action checks, raising ``ActionError``
(``checking`` says where checks run; this is the opt-in that reports them from compiled code)."""

from __future__ import annotations

import contextlib
import functools
import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import jax
from jax._src import checkify as checkify_internals
from jax.experimental import checkify

from envhub.core.checking import CHECKIFY_SUFFIX, STOP, report_in_jit
from envhub.errors import ActionError


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
            except ValueError as exc:
                if "batched while" not in str(exc):
                    raise
                checkify_works[0] = False
            else:
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
                return stop(*args, **kwargs)
            except (jax.errors.JaxRuntimeError, ValueError, RuntimeError) as exc:  # JAX wraps the callback's
                text = str(exc)
                if ActionError.PREFIX not in text:
                    raise
                message = ActionError.PREFIX + text.split(ActionError.PREFIX, 1)[1].split("\n", 1)[0]
                raise ActionError.from_message(message) from None

    return call


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
