"""Wrappers that change the action before the inner env sees it (continuous ``Box`` actions).

Each is a ``TransformAction`` with a fixed function and the action space the agent now acts in.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.env import Environment
from envhub.errors import InvalidArgumentError
from envhub.wrappers.transform import TransformAction


def _box(env: Environment[Any, Any, Any], wrapper: str, bounded: bool) -> spaces.Box:
    box = env.single_action_space
    finite = isinstance(box, spaces.Box) and np.isfinite(box.low).all() and np.isfinite(box.high).all()
    if not isinstance(box, spaces.Box) or (bounded and not finite):
        kind = "a bounded Box" if bounded else "a Box"
        raise InvalidArgumentError(f"{wrapper} needs {kind} action space; {env.id!r} has {box!r}.")
    return box


class ClipAction(TransformAction):
    """Clip actions to the ``Box`` action space's bounds, so a policy may output any real value.

    The action space becomes an unbounded ``Box`` of the same shape and dtype.
    """

    def __init__(self, env: Environment[Any, Any, Any]):
        box = _box(env, "ClipAction", bounded=False)

        def clip(action: jax.Array) -> jax.Array:
            return jnp.clip(action, box.low, box.high).astype(box.dtype)

        super().__init__(env, clip, spaces.Box(-np.inf, np.inf, box.shape, box.dtype))


class RescaleAction(TransformAction):
    """Take actions in ``[low, high]`` (default ``[-1, 1]``) and map them linearly onto the ``Box`` action space.

    The inner action space must be bounded; the action space becomes ``Box(low, high)`` of its shape.
    """

    def __init__(self, env: Environment[Any, Any, Any], low: float = -1.0, high: float = 1.0):
        box = _box(env, "RescaleAction", bounded=True)
        if not low < high:
            raise InvalidArgumentError(f"RescaleAction(low={low!r}, high={high!r}) needs low < high.")
        scale = (box.high - box.low) / (high - low)

        def rescale(action: jax.Array) -> jax.Array:
            return (box.low + (action - low) * scale).astype(box.dtype)

        super().__init__(env, rescale, spaces.Box(low, high, box.shape, box.dtype))
        self.low, self.high = low, high


class Discretize(TransformAction):
    """Turn a continuous ``Box`` action space into ``bins`` evenly spaced values per dimension.

    The action space becomes ``MultiDiscrete`` of the Box's shape; action ``i`` of a dimension
    means ``low + i * (high - low) / (bins - 1)``. The Box must be bounded.
    """

    def __init__(self, env: Environment[Any, Any, Any], bins: int):
        box = _box(env, "Discretize", bounded=True)
        if not isinstance(bins, int) or bins < 2:
            raise InvalidArgumentError(f"Discretize(bins={bins!r}) needs an int of at least 2.")
        step = (box.high - box.low) / (bins - 1)

        def continuous(action: jax.Array) -> jax.Array:
            return (box.low + action * step).astype(box.dtype)

        super().__init__(env, continuous, spaces.MultiDiscrete(np.full(box.shape, bins)))
        self.bins = bins


__all__ = ["ClipAction", "Discretize", "RescaleAction"]
