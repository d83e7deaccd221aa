"""Ranges of numbers: ``make``'s kwargs (``Kwarg.bounds``) and an env's params (``params_bounds``), one rule for both.

A range is ``(low, high)``: both ends included, ``None`` open on that side, a low end made with ``Above``
(``Kwarg.above(x)``, ``Bounds.above(x)``) excluded. ``outside`` is the one comparison (every element of an
array, NaN outside any bounded range) and ``bounds_rule`` the one wording; ``within`` (a ``make`` kwarg) and
``first_outside`` (params leaves, at ``init``/``reset``/``set_params`` and at ``make``) use them.

An env's ``params_bounds`` is a ``Bounds``, keyed as ``default_params`` is: ``Bounds(body_mass=(0.0, None))``
for a dict or a dataclass with that field, ``Bounds(physics={"mass": (0.0, None)})`` a level down; a range on
a node holds for every leaf below it. Plugin API 1's ``{"params['body_mass']": (0.0, None)}`` (leaf names as
``jax.tree_util.keystr`` writes them) is still read, with a ``DeprecationWarning``: it goes with plugin API 2
(envhub 0.3.0 at the earliest, docs/compatibility.md).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from envhub.errors import InvalidArgumentError

if TYPE_CHECKING:
    import numpy as np

#: ``(low, high)`` a number must lie in; ``None``: open on that side.
Range = tuple[float | None, float | None]


class Above(float):
    """A low end of a range that the value must exceed, not equal (a time step, a mass)."""


def outside(values: Any, bounds: Range) -> np.ndarray:
    """Which elements of ``values`` (a number or an array) lie outside ``bounds``; NaN is outside a bounded range."""
    import numpy as np  # here: make's kwargs tables (core.kwargs) import this module, and the CLI imports no numpy

    low, high = bounds
    array = np.asarray(values)
    # A float leaf is compared with each end rounded to its own dtype, as NumPy 2 does (float32 -9.8 is not
    # below the end -9.8); NumPy 1.x would compare in float64 and refuse a default lying on the end.
    edge = array.dtype.type if np.issubdtype(array.dtype, np.floating) else (lambda end: end)
    inside = np.ones(array.shape, bool)
    if low is not None:
        inside &= array > edge(low) if isinstance(low, Above) else array >= edge(low)
    if high is not None:
        inside &= array <= edge(high)
    return ~inside


def within(value: Any, bounds: Range | None) -> bool:
    """Whether the ``make`` kwarg ``value`` lies in ``bounds``; None, non-numbers and arrays pass (types are checked
    elsewhere), NaN does not."""
    if bounds is None or value is None or isinstance(value, bool):
        return True
    number = value  # a Python int compares exactly, however large
    if not isinstance(value, (int, float)):
        if getattr(value, "shape", None) != ():
            return True
        try:
            number = float(value)  # NumPy and JAX scalars
        except (TypeError, ValueError, OverflowError):
            return True
    return not bool(outside(number, bounds))


def bounds_rule(bounds: Range) -> str:
    """``bounds`` in words: ``>= 1``, ``<= 0.5``, ``from 0.0 to 1.0``, ``2`` (the one value), ``> 0.0``."""
    low, high = bounds
    if isinstance(low, Above):
        return f"> {low!r}" + ("" if high is None else f" and <= {high!r}")
    if low is not None and low == high:
        return f"{low!r}"
    if low is not None and high is not None:
        return f"from {low!r} to {high!r}"
    return f">= {low!r}" if low is not None else f"<= {high!r}"


def leaf_name(path: Any) -> str:
    """``params.gravity``, ``params['body_mass']``: how messages name a leaf of params (``keystr`` of its path)."""
    import jax

    return "params" + jax.tree_util.keystr(path)


class Bounds:
    """The ranges of an env's params (``params_bounds``), keyed as ``default_params`` is.

    ``Bounds(gravity=(None, 0.0), masspole=(Bounds.above(0.0), None))`` for params with those fields or keys;
    a mapping as a value goes a level down (``Bounds(physics={"mass": (0.0, None)})``), and a mapping may be
    given whole (``Bounds({"mass": (0.0, None)})``, keys of any type, e.g. a list's indices). A range on a node
    holds for every leaf below it. Malformed ranges are an ``InvalidArgumentError`` here; a key ``default_params``
    lacks is one where the bounds meet the params (the kit's ``params`` check names it).
    """

    above = Above

    def __init__(self, fields: Mapping[Any, Any] | None = None, /, **more: Any):
        self._ranges: dict[tuple[Any, ...], Range] = {}
        for key, value in [*(fields or {}).items(), *more.items()]:
            self._add((key,), value)

    def _add(self, path: tuple[Any, ...], value: Any) -> None:
        if isinstance(value, Bounds):
            self._ranges.update({path + sub: bounds for sub, bounds in value.items()})
        elif isinstance(value, Mapping):
            for key, sub in value.items():
                self._add(path + (key,), sub)
        else:
            self._ranges[path] = _checked_range(path, value)

    def items(self) -> Iterator[tuple[tuple[Any, ...], Range]]:
        """``(path, (low, high))`` for each range: ``path`` the keys (field names, dict keys, indices) down to it."""
        return iter(self._ranges.items())

    def __len__(self) -> int:
        return len(self._ranges)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Bounds) and self._ranges == other._ranges

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        def shown(end: Any) -> str:
            return f"Bounds.above({float(end)!r})" if isinstance(end, Above) else repr(end)

        ranges = ", ".join(f"{_dotted(p)}=({shown(low)}, {shown(high)})" for p, (low, high) in self._ranges.items())
        return f"Bounds({ranges})"


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(key) for key in path)


def _checked_range(path: tuple[Any, ...], value: Any) -> Range:
    where = f"Bounds: {_dotted(path)}={value!r}"
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InvalidArgumentError(
            f"{where} is not a range: give (low, high), None for an open end, e.g. (0.0, None) or (Bounds.above(0.0), 1.0)."
        )
    for end in value:
        if end is not None and (isinstance(end, bool) or not isinstance(end, numbers.Real)):
            raise InvalidArgumentError(f"{where}: its end {end!r} is not a number; give numbers or None.")
        if end is not None and math.isnan(end):
            raise InvalidArgumentError(f"{where}: an end is NaN, which nothing lies within; give a number or None.")
    low, high = value
    if low is not None and high is not None and low > high:
        raise InvalidArgumentError(f"{where}: its low end is above its high end; give (low, high) with low <= high.")
    return low, high


def leaf_ranges(env_id: str, default: Any, declared: Any) -> list[tuple[int, str, Range]]:
    """``(leaf index, leaf name, range)`` for each range of ``declared`` (a ``Bounds``, or API 1's mapping of leaf
    names) over the leaves of ``default`` (in ``jax.tree.leaves`` order).

    Raises:
        InvalidArgumentError: a key of a ``Bounds`` that ``default`` does not have (a fault of the backend).
    """
    import jax

    if not declared:
        return []
    paths = [path for path, _ in jax.tree_util.tree_flatten_with_path(default)[0]]
    if not isinstance(declared, Bounds):
        return _named_ranges(env_id, paths, declared)
    keys = [tuple(_key(entry) for entry in path) for path in paths]
    found = []
    for where, bounds in declared.items():
        hits = [(i, leaf_name(paths[i]), bounds) for i, key in enumerate(keys) if key[: len(where)] == where]
        if not hits:
            have = ", ".join(leaf_name(path) for path in paths) or "none"
            raise InvalidArgumentError(
                f"params_bounds of {env_id!r} bound {_dotted(where)!r}, which env.default_params does not have "
                f"(its leaves: {have}); the backend's Bounds must follow default_params' structure: report it to its plugin."
            )
        found += hits
    return found


def _named_ranges(env_id: str, paths: list[Any], declared: Mapping[str, Range]) -> list[tuple[int, str, Range]]:
    """Plugin API 1's ``{"params['x']": (low, high)}``: names matching no leaf are passed over, as they were."""
    names = {leaf_name(path): i for i, path in enumerate(paths)}
    warnings.warn(
        f"params_bounds of {env_id!r} is keyed by leaf names ({next(iter(declared))!r}); give an envhub.plugin.Bounds "
        f"keyed as default_params is (Bounds(body_mass=(0.0, None))); leaf names go with plugin API 2 (envhub 0.3.0 at "
        f"the earliest).",
        DeprecationWarning,
        stacklevel=4,
    )
    return [(names[name], name, _checked_range((name,), r)) for name, r in declared.items() if name in names]


def _key(entry: Any) -> Any:
    """The field name, dict key or index one step of a ``jax.tree_util`` key path stands for."""
    for attribute in ("key", "name", "idx"):  # DictKey and FlattenedIndexKey, GetAttrKey, SequenceKey
        if hasattr(entry, attribute):
            return getattr(entry, attribute)
    return entry


def first_outside(value: Any, bounds: Range) -> Any:
    """The first element of ``value`` (a number or an array) outside ``bounds``, as a Python number; ``None`` if
    none is, or ``value`` is traced (values are free under ``jit``) or holds no numbers (types are checked elsewhere)."""
    import jax
    import numpy as np

    if isinstance(value, jax.core.Tracer) or isinstance(value, bool) or not _numeric(value):
        return None
    array = np.asarray(value)
    bad = outside(array, bounds)
    return array[bad].flat[0].item() if np.any(bad) else None


def _numeric(value: Any) -> bool:
    """Whether ``value`` holds numbers (not bools, keys or strings): a Python int of any size included."""
    import jax
    import numpy as np

    if isinstance(value, (int, float)):
        return not isinstance(value, bool)
    try:
        dtype = value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype
    except (TypeError, ValueError, OverflowError):
        return False
    return not jax.numpy.issubdtype(dtype, jax.dtypes.extended) and bool(np.issubdtype(dtype, np.number))


__all__ = ["Above", "Bounds", "Range", "bounds_rule", "first_outside", "leaf_name", "leaf_ranges", "outside", "within"]
