"""The leaf rule of every export's spaces, over the one walk of a space's tree (``envhub.spaces.convert``).

A target library's space for one envhub leaf space (docs/interop.md, "Spaces"):

- a ``Discrete`` (one integer from 0), of any integer dtype, is the target's discrete space (``discrete_n``); its
  dtype is kept where the target holds it, else the target's default integer;
- another integer space is the target's multi-discrete space where it has one that fits (one axis, from 0:
  ``multi_discrete_nvec``), else an integer box with its inclusive bounds (``inclusive_bounds``);
- a ``Box`` is the target's box, its bounds in its dtype;
- a leaf the target cannot express is refused naming it (``InvalidArgumentError``), never a bare library error.

gymnasium keeps ``start`` itself, so its conversion (``envhub.host.gymnasium_spaces``, which host backends share)
walks the same tree with its own leaves; every other export goes through ``target_space`` (gymnax and JaxMARL,
whose spaces are gymnax's, through ``gymnax_style_space``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from envhub import spaces
from envhub.errors import InvalidArgumentError


def target_space(
    export: str, library: str, what: str, space: spaces.Space, leaf: Callable[[spaces.Space], Any], node: Any
) -> Any:
    """``space`` as ``library``'s: ``leaf`` of each leaf space (``None``: no counterpart), ``node`` of each dict or
    tuple of a ``Tree`` (``envhub.spaces.convert``); ``what`` names the space in the error (``"the action space"``).

    Raises:
        InvalidArgumentError: a leaf has no counterpart in ``library``.
    """

    def checked(sub: spaces.Space) -> Any:
        out = leaf(sub)
        if out is None:
            raise InvalidArgumentError(
                f"{export}: {what}, {space!r}, holds {sub!r}, which has no {library} counterpart; convert it first "
                f"(envhub.wrappers.TransformObservation, or a wrapper of your own)."
            )
        return out

    return spaces.convert(space, checked, node)


def gymnax_style_space(
    export: str, library: Any, what: str, space: spaces.Space, discrete_dtype: Callable[[Any], Any]
) -> Any:
    """``space`` in the spaces module ``library`` of gymnax's kind (gymnax's, JaxMARL's): ``Discrete`` (its dtype
    ``discrete_dtype(dtype)``), ``MultiDiscrete`` where the module has one, ``Box``, ``Dict`` and ``Tuple``."""
    name = library.__name__.split(".")[0]

    def leaf(sub: spaces.Space) -> Any:
        n, nvec = discrete_n(sub), multi_discrete_nvec(sub)
        if n is not None:
            return library.Discrete(n, dtype=discrete_dtype(sub.dtype))
        if nvec is not None and hasattr(library, "MultiDiscrete"):
            return library.MultiDiscrete(nvec)
        if isinstance(sub, (spaces.Box, spaces.MultiDiscrete)):
            return library.Box(*inclusive_bounds(sub), sub.shape, sub.dtype)
        return None

    def node(children: Any) -> Any:
        return library.Dict(children) if isinstance(children, dict) else library.Tuple(list(children))

    return target_space(export, name, what, space, leaf, node)


def discrete_n(space: spaces.Space) -> int | None:
    """``n`` of one ``Discrete`` from 0 (shape ``()``, any integer dtype), else ``None``."""
    if isinstance(space, spaces.Discrete) and space.shape == () and space.start_value == 0:
        return space.n
    return None


def multi_discrete_nvec(space: spaces.Space) -> list[int] | None:
    """The ``nvec`` of a ``MultiDiscrete`` of one axis counted from 0 (any integer dtype), else ``None``."""
    if isinstance(space, spaces.MultiDiscrete) and len(space.shape) == 1 and not space.start.any():
        return [int(n) for n in space.nvec]
    return None


def inclusive_bounds(space: spaces.Space) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of a ``Box`` or ``MultiDiscrete`` (``start`` and ``start + nvec - 1``), in the space's dtype."""
    if isinstance(space, spaces.MultiDiscrete):
        return space.start.astype(space.dtype), (space.start + space.nvec - 1).astype(space.dtype)
    assert isinstance(space, spaces.Box)
    return space.low.astype(space.dtype), space.high.astype(space.dtype)


__all__ = ["discrete_n", "gymnax_style_space", "inclusive_bounds", "multi_discrete_nvec", "target_space"]
