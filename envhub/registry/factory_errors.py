"""A factory's refusal of the user's ``make`` arguments: an envhub error that keeps the class the factory raised.

When a backend's factory raises for the arguments the user gave (``ValueError("time_limit must be > 0")``
for ``time_limit=0``), ``make`` raises an instance of a class made for that exception class, a subclass
of both ``envhub.errors.BackendArgumentError`` and the original: ``except ValueError`` still catches it,
``except EnvhubError`` too, and its message names the env, the plugin and the argument. The original
is its ``__cause__`` and ``original``. Which exceptions count as the user's arguments (``refusal``):

- a ``ValueError`` when the user gave any argument (the one given, or those it names, else all);
- a ``TypeError``, ``LookupError`` (``KeyError``, ``IndexError``) or ``AssertionError`` (libraries that check
  their arguments with ``assert``, as jaxmarl does) whose message names a given argument (or, for a lookup,
  repeats a given value): elsewhere they are usually the plugin's own bug.

Everything else (``AttributeError``, ``ImportError``, ``RuntimeError``, an ``AssertionError`` naming none, ...) stays the
plugin's fault, a ``PluginLoadError``. One class per original class, made once and cached; instances
pickle (without ``original`` and its fields when the original does not).
"""

from __future__ import annotations

import pickle
import re
import threading
from typing import Any

from envhub.errors import BackendArgumentError, EnvKwargsError, one_line

_CLASSES: dict[type[BaseException], type[BackendArgumentError]] = {}
_LOCK = threading.Lock()


def refusal_class(original: type[BaseException]) -> type[BackendArgumentError]:
    """The subclass of ``BackendArgumentError`` and ``original`` (and of ``EnvKwargsError`` for a ``TypeError``)."""
    with _LOCK:
        if original not in _CLASSES:
            _CLASSES[original] = _make_class(original)
        return _CLASSES[original]


def _make_class(original: type[BaseException]) -> type[BackendArgumentError]:
    for base in original.__mro__:  # a class ours cannot join (a layout or metaclass conflict): its closest base
        ours = (BackendArgumentError, EnvKwargsError) if issubclass(base, TypeError) else (BackendArgumentError,)
        namespace = {
            "__module__": __name__,
            "__qualname__": f"BackendArgumentError[{base.__qualname__}]",
            "__doc__": f"The backend's factory refused an argument given to make with a {base.__qualname__}.",
            "__str__": _str,
            "__reduce__": _reduce,
            "original_class": original,
        }
        try:
            return type(f"BackendArgumentError[{base.__name__}]", (*ours, base), namespace)
        except TypeError:
            continue
    raise AssertionError(f"no refusal class for {original!r}")  # unreachable: Exception always joins


def _str(self: BaseException) -> str:
    return str(self.args[0]) if self.args else ""  # the message, not KeyError's repr of it


def _reduce(self: BaseException) -> tuple[Any, ...]:
    state = vars(self)
    try:
        pickle.loads(pickle.dumps(state))
    except Exception:  # an original that does not round-trip (dumps, or loads: its own __init__): its text stays
        state = {k: state.get(k) for k in ("env_id", "kwarg", "prefix", "origin")} | {"original": None}
    return _rebuild, (vars(type(self))["original_class"], self.args), state


def _rebuild(original: type[BaseException], args: tuple[Any, ...]) -> BackendArgumentError:
    cls = refusal_class(original)
    error = cls.__new__(cls)
    error.args = args
    return error


def refusal(
    env_id: str, prefix: str, origin: str, kwargs: dict[str, Any], exc: BaseException
) -> BackendArgumentError | None:
    """The error for ``exc``, raised by ``env_id``'s factory given ``kwargs``, if it refuses them; else None."""
    given = {k: v for k, v in kwargs.items() if not (k == "num_envs" and v is None)}
    if not given or not isinstance(exc, (ValueError, TypeError, LookupError, AssertionError)):
        return None
    text = str(exc)
    named = [k for k in given if re.search(rf"(?<!\w){re.escape(k)}(?!\w)", text)]
    if not named and isinstance(exc, LookupError):
        named = [k for k, v in given.items() if isinstance(v, (str, int)) and repr(v) in text]
    if not named and not isinstance(exc, ValueError):
        return None
    if not named and len(given) == 1:  # a ValueError for the one argument given
        named = list(given)
    shown = ", ".join(f"{k}={given[k]!r}" for k in (named or given))
    what = "spelling and type" if isinstance(exc, TypeError) else "value"
    fix = (
        f"check {'its' if len(named) == 1 else 'their'} {what} against the backend's README "
        f"(`envhub info {env_id}` lists the kwargs it accepts)"
        if named
        else "check them against the backend's README; if they are right, report it to the plugin's authors"
    )
    fixed = re.search(r"got multiple values for (?:keyword )?argument '(\w+)'", text)
    if isinstance(exc, TypeError) and fixed and fixed[1] in named:  # a base's argument the env passes itself
        fix = f"{env_id} sets {fixed[1]} itself: leave it out"
    problem = f"the plugin {prefix!r} ({origin}) refused {shown}: {type(exc).__name__}: {one_line(exc).rstrip('.')}"
    cls = refusal_class(type(exc))
    error = cls.__new__(cls)
    error.args = (f"make({env_id!r}, ...): {problem}; {fix}.",)
    fields = vars(error)
    fields.update(getattr(exc, "__dict__", {}))  # the original's own fields (e.g. a JSONDecodeError's pos)
    fields.update(
        env_id=env_id, kwarg=named[0] if len(named) == 1 else None, original=exc, prefix=prefix, origin=origin
    )
    return error


__all__ = ["refusal", "refusal_class"]
