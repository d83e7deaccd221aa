"""``make``'s keyword arguments against what an environment declares (``core.kwargs``), before its factory runs."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from envhub.core.kwargs import (
    ENVHUB_OWNED,
    MAKE_KWARGS,
    OTHERS,
    Kwarg,
    bounds_rule,
    describe,
    from_signature,
    listing,
    matches,
    short_repr,
    within,
)
from envhub.errors import EnvhubError, EnvKwargsError, InvalidArgumentError, PluginLoadError
from envhub.registry.loading import PLUGIN_FAULTS
from envhub.registry.specs import EnvSpec


def accepted(spec: EnvSpec, origin: str = "") -> dict[str, Kwarg] | None:
    """What ``spec`` accepts: its plugin's declaration, else its factory's signature; None if it takes anything."""
    declared = spec.kwargs
    if declared is None:
        if spec.factory is None:
            return None
        found, more = from_signature(spec.factory, ("num_envs",) if spec.batching == "native" else ())
        return None if more else found
    try:
        declared = declared() if callable(declared) else declared
        if not isinstance(declared, Mapping) or not all(isinstance(v, Kwarg) for v in declared.values()):
            raise TypeError(f"its kwargs declaration is {declared!r:.60}, not a mapping of names to envhub.Kwarg")
    except EnvhubError:
        raise
    except PLUGIN_FAULTS as exc:
        raise PluginLoadError(spec.prefix, origin or spec.prefix, exc, f"declaring the kwargs of {spec.id!r}") from exc
    return dict(declared)


def check(spec: EnvSpec, kwargs: Mapping[str, Any], origin: str = "") -> None:
    """Raise for the first kwarg ``spec`` does not accept: ``EnvKwargsError`` if unknown, refused or of the wrong
    type, ``InvalidArgumentError`` if a number outside its declared ``bounds``, or NaN (``holds_nan``: every kwarg,
    declared or not; inf passes unless ``bounds`` exclude it, as a range such as ``(0.2, inf)`` is a fair value)."""
    table = accepted(spec, origin) if kwargs else None
    if table is not None:  # None: nothing given, or a backend that takes anything
        _check_declared(spec, table, kwargs)
    for name, value in kwargs.items():  # after the declared rules: a declared range names the values it takes
        if holds_nan(value):
            what = "holds a NaN" if isinstance(value, (tuple, list, Mapping)) else "is NaN"
            raise InvalidArgumentError(
                f"make({spec.id!r}, ...): {name}={short_repr(value)} {what}, which no keyword argument takes; "
                f"give a number (`envhub info {spec.id}` lists each keyword argument)."
            )


def _check_declared(spec: EnvSpec, table: Mapping[str, Kwarg], kwargs: Mapping[str, Any]) -> None:
    """Raise for the first kwarg of ``kwargs`` that ``table`` (what ``spec`` accepts) does not take."""
    for name, value in kwargs.items():
        decl = table.get(name) or (None if OTHERS in table else ENVHUB_OWNED.get(name))
        if decl is None:
            if OTHERS in table:
                continue
            known = [n for n in table if n != OTHERS] + [n for n in MAKE_KWARGS if n not in table]
            close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
            hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
            problem = f"unknown keyword argument {name}={short_repr(value)}{hint}"
        elif decl.refused:
            problem = f"keyword argument {name}={short_repr(value)} is refused: {decl.refused}"
        elif not matches(value, decl.type):
            problem = f"{name}={short_repr(value)} ({type(value).__name__}) is not {describe(decl.type)}"
        elif not within(value, decl.bounds):
            assert decl.bounds is not None
            none = " or None" if matches(None, decl.type) else ""
            raise InvalidArgumentError(
                f"make({spec.id!r}, ...): {name}={short_repr(value)} is out of range: it must be "
                f"{bounds_rule(decl.bounds)}{none}; give a value in that range (`envhub info {spec.id}` lists "
                "each keyword argument's range)."
            )
        elif decl.alias_of and decl.alias_of in kwargs:
            target = f"{decl.alias_of}={short_repr(kwargs[decl.alias_of])}"
            problem = (
                f"{name}={short_repr(value)} and {target} both given ({name} is an alias): pass only {decl.alias_of}"
            )
        else:
            continue
        fix = f"{spec.id} accepts {every_kwarg(table)}; fix or drop it (`envhub info {spec.id}` lists them)"
        raise EnvKwargsError(spec.id, problem, fix, name)


def every_kwarg(table: Mapping[str, Kwarg]) -> str:
    """Every keyword ``make`` takes for an environment accepting ``table``: the factory's, then make's own."""
    own = listing({n: kw for n, kw in MAKE_KWARGS.items() if n not in table})
    shown = listing(table)
    return f"only make's own {own}" if shown == listing({}) else f"{shown}, and make's own {own}"


def holds_nan(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` is a NaN number (Python, NumPy or JAX scalar) or a tuple, list or dict holding one
    (two levels deep); arrays and other objects pass: what NaN means inside them is the backend's."""
    if isinstance(value, (tuple, list)) or isinstance(value, Mapping):
        items = value.values() if isinstance(value, Mapping) else value
        return depth < 2 and any(holds_nan(v, depth + 1) for v in items)
    if not isinstance(value, (float, complex)) and getattr(getattr(value, "dtype", None), "kind", "") not in ("f", "c"):
        return False
    try:
        return getattr(value, "shape", ()) == () and bool(value != value)  # NaN is the one value unequal to itself
    except Exception:  # noqa: BLE001 - e.g. a traced scalar: not ours to judge
        return False


__all__ = ["accepted", "check", "every_kwarg", "holds_nan"]
