"""The keyword arguments ``make`` passes to a backend, declared per environment (``registry.kwargs_check`` checks them).

A plugin declares what an environment accepts with ``register(name, factory, kwargs=...)``: names to
``Kwarg`` (type, default, doc), or a callable returning them, called by ``make`` (so it may import the
backend; ``envhub list`` never calls it). Undeclared: the factory's signature (``**kwargs``: anything).
The key ``"**"`` lets other names through unchecked (``Kwarg(doc="where they go")``).

Types are Python types or typing annotations: ``int`` (not bool), ``float`` (ints pass), ``bool``,
``str``, ``X | None``, ``Literal["a", "b"]``, ``tuple[float, ...]``, ``Sequence[str]``, ``dict[str, float]``,
``Callable``, a class (``isinstance``; an ``Enum`` also takes its values) or ``Any`` (any value, the name is
still checked). NumPy/JAX scalars pass as numbers. A construct not understood here never refuses.
NaN is refused for every kwarg, declared or not (also inside a tuple, list or dict); inf passes unless
``bounds`` exclude it (e.g. a range ``(0.2, inf)`` is a value): ``registry.kwargs_check.holds_nan``.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import os
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

from envhub.core.bounds import Above, Range, bounds_rule, within

#: The make kwarg that sets the time limit on every first-party backend (native names are aliases).
TIME_LIMIT_KWARG = "max_episode_steps"
#: The largest time limit: episode steps are counted in int32.
STEPS_MAX = 2**31 - 1
#: The key of a declaration meaning "other names are passed on unchecked".
OTHERS = "**"
#: The ``default`` of a kwarg that has none.
REQUIRED: Any = inspect.Parameter.empty


@dataclasses.dataclass(frozen=True)
class Kwarg:
    """One keyword argument an environment accepts.

    Attributes:
        type: What values it takes (see the module docstring); ``Any``: every value.
        default: Its default (``REQUIRED``: none).
        doc: One short line.
        alias_of: For a backend's native name of an envhub kwarg: that kwarg (e.g. ``"max_episode_steps"``).
        refused: Non-empty for a name the environment knowingly refuses: why, and what to do instead.
        bounds: For a number, ``(low, high)`` it must lie in, both included (``None``: open on that side); a
            value outside is an ``InvalidArgumentError`` before the factory runs (None and non-numbers pass).
            ``Kwarg.above(low)`` as the low end excludes it: ``(Kwarg.above(0.0), None)`` is ``> 0.0``.
    """

    type: Any = Any
    default: Any = REQUIRED
    doc: str = ""
    alias_of: str = ""
    refused: str = ""
    bounds: Range | None = None

    above = Above  # not a field (no annotation): plugins reach it through the Kwarg they import


#: ``make``'s own keyword arguments (never passed to the backend), for listings.
MAKE_KWARGS: dict[str, Kwarg] = {
    "num_envs": Kwarg(int | None, None, "batch size; None for one environment"),
    "mesh": Kwarg(Any, None, "a one-axis jax.sharding.Mesh sharding the batch"),
    "validate_actions": Kwarg(
        bool | Literal["strict"], True, 'check action values in step ("strict": also stop in jit)'
    ),
}
#: Names envhub itself sets, refused wherever an environment's declaration does not accept them.
ENVHUB_OWNED: dict[str, Kwarg] = {
    name: Kwarg(refused="envhub seeds every environment from the key given to init/reset: pass jax.random.key(SEED)")
    for name in ("seed", "env_seed")
}


def time_limit_kwargs(default: int | None, native: str = "", doc: str = "") -> dict[str, Kwarg]:
    """``max_episode_steps`` (an int, or None for no limit) and, if given, the backend's ``native`` name as its alias."""
    doc = doc or "steps after which an episode is truncated (None: no limit)"
    # Steps are counted in int32 (a larger limit overflowed in the backend); 0 or less is each plugin's to word.
    kw = {TIME_LIMIT_KWARG: Kwarg(int | None, default, doc, bounds=(None, STEPS_MAX))}
    if native and native != TIME_LIMIT_KWARG:
        alias = f"the backend's name for {TIME_LIMIT_KWARG}"
        kw[native] = Kwarg(int | None, default, alias, TIME_LIMIT_KWARG, bounds=(None, STEPS_MAX))
    return kw


def matches(value: Any, tp: Any) -> bool:
    """Whether ``value`` is of the declared type ``tp``."""
    if tp is Any or tp is object or tp is inspect.Parameter.empty:
        return True
    if tp is None or tp is type(None):
        return value is None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        return any(matches(value, a) for a in args)
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if tp in (bool, int, float):
        return _number(value, tp)
    if tp is str:
        return isinstance(value, (str, os.PathLike))
    kind = origin or tp
    if kind in (tuple, list, collections.abc.Sequence):
        return _sequence(value, kind, args)
    if kind in (dict, collections.abc.Mapping):
        return isinstance(value, Mapping) and (
            len(args) != 2 or all(matches(k, args[0]) and matches(v, args[1]) for k, v in value.items())
        )
    if kind is collections.abc.Callable:
        return callable(value)
    if isinstance(kind, type):
        if issubclass(kind, enum.Enum) and any(value == m.value for m in kind):
            return True
        try:
            return isinstance(value, kind)
        except TypeError:
            return True
    return True  # a construct not understood here: never refuse on it


def _number(value: Any, tp: type) -> bool:
    if isinstance(value, (bool, int, float)):
        kind = "b" if isinstance(value, bool) else "i" if isinstance(value, int) else "f"
    elif getattr(value, "shape", None) == ():  # NumPy and JAX scalars
        kind = getattr(getattr(value, "dtype", None), "kind", "")
    else:
        return False
    return kind in {bool: "b", int: "iu", float: "iuf"}[tp]


def _sequence(value: Any, kind: Any, args: tuple[Any, ...]) -> bool:
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list) if kind in (tuple, list) else kind):
        return False
    if kind is tuple and args and args[-1] is not Ellipsis:
        return len(value) == len(args) and all(matches(v, a) for v, a in zip(value, args))
    return not args or all(matches(v, args[0]) for v in value)


def describe(tp: Any) -> str:
    """A short name of a declared type: ``int | None``, ``'real' | 'cached'``, ``tuple[float, ...]``, ``any``."""
    if tp is Any or tp is object or tp is inspect.Parameter.empty:
        return "any"
    if tp is None or tp is type(None):
        return "None"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        return " | ".join(describe(a) for a in args)
    if origin is Literal:
        return " | ".join(repr(a) for a in args)
    if hasattr(tp, "__name__") and not args:
        return str(tp.__name__)
    return repr(tp).replace("typing.", "").replace("collections.abc.", "")


def infer_type(default: Any) -> Any:
    """The type to declare for a kwarg known only by its default: its Python type, ``Any`` for None and arrays."""
    if isinstance(default, (bool, int, float, str, tuple, list, dict, enum.Enum)):
        return type(default)
    return Any


def from_signature(target: Any, skip: tuple[str, ...] = ()) -> tuple[dict[str, Kwarg], bool]:
    """The keyword arguments a callable (or class) takes, and whether it also takes ``**kwargs``.

    A class whose ``__init__`` takes ``**kwargs`` adds its bases' ``__init__`` parameters that have a default,
    up its MRO. A parameter whose default is None also takes None, whatever its annotation.
    """
    is_class = isinstance(target, type)
    chain = [c.__dict__["__init__"] for c in target.__mro__ if "__init__" in c.__dict__] if is_class else [target]
    found: dict[str, Kwarg] = {}
    more = False
    for depth, fn in enumerate(chain):
        if fn is object.__init__:
            break
        try:
            parameters = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            return found, True  # no signature to read: take anything
        if is_class:
            parameters = parameters[1:]  # self
        hints = _hints(fn)
        more = False
        for p in parameters:
            if p.kind is p.VAR_KEYWORD:
                more = True
            elif p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL) or p.name in skip or p.name in found:
                continue
            elif p.default is not p.empty or depth == 0:  # a base's required argument: the subclass passes it
                tp = hints.get(p.name, infer_type(p.default) if p.default is not None else Any)
                found[p.name] = Kwarg(_optional(tp) if p.default is None else tp, p.default)
        if not more:
            break
    return found, more


def _optional(tp: Any) -> Any:
    try:
        return tp if matches(None, tp) else typing.Optional[tp]  # noqa: UP045 - tp may be no class
    except TypeError:
        return Any


def _hints(fn: Any) -> dict[str, Any]:
    """``fn``'s resolved parameter annotations; one that cannot be resolved is ``Any``."""
    fn = getattr(fn, "func", fn)  # functools.partial
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - some annotation names something not importable here
        out = {}
    for name, ann in getattr(fn, "__annotations__", {}).items():
        try:
            out[name] = eval(ann, getattr(fn, "__globals__", {})) if isinstance(ann, str) else ann  # noqa: S307
        except Exception:  # noqa: BLE001
            out[name] = Any
    return out


def listing(table: Mapping[str, Kwarg]) -> str:
    """``name: type = default`` of every accepted kwarg, on one line (aliases next to what they alias)."""
    aliases: dict[str, list[str]] = {}
    for name, kw in table.items():
        if kw.alias_of:
            aliases.setdefault(kw.alias_of, []).append(name)
    shown = [
        describe_one(name, kw) + (f" (alias {', '.join(aliases[name])})" if name in aliases else "")
        for name, kw in table.items()
        if not kw.alias_of and not kw.refused and name != OTHERS
    ]
    if OTHERS in table:
        shown.append(f"other names unchecked{f' ({table[OTHERS].doc})' if table[OTHERS].doc else ''}")
    return ", ".join(shown) or "no keyword arguments"


def describe_one(name: str, kw: Kwarg) -> str:
    """``name: type = default`` (no ``= ...`` when it has no default)."""
    default = "" if kw.default is REQUIRED else f" = {short_repr(kw.default)}"
    return f"{name}: {describe(kw.type)}{default}"


def short_repr(value: Any, width: int = 40) -> str:
    """``repr(value)`` on one line, cut to ``width`` characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= width else text[: width - 3] + "..."


__all__ = [
    "ENVHUB_OWNED",
    "MAKE_KWARGS",
    "OTHERS",
    "REQUIRED",
    "TIME_LIMIT_KWARG",
    "Above",
    "Kwarg",
    "bounds_rule",
    "describe",
    "describe_one",
    "from_signature",
    "infer_type",
    "listing",
    "matches",
    "short_repr",
    "time_limit_kwargs",
    "within",
]
