"""Wrappers that change the action before the inner env sees it (continuous ``Box`` actions)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.env import Environment
from envhub.errors import InvalidArgumentError
from envhub.types import TimeStep
from envhub.wrappers.base import Wrapper


def _box(env: Environment[Any, Any, Any], wrapper: str, bounded: bool) -> spaces.Box:
    box = env.single_action_space
    finite = isinstance(box, spaces.Box) and np.isfinite(box.low).all() and np.isfinite(box.high).all()
    if not isinstance(box, spaces.Box) or (bounded and not finite):
        kind = "a bounded Box" if bounded else "a Box"
        raise InvalidArgumentError(f"{wrapper} needs {kind} action space; {env.id!r} has {box!r}.")
    return box


class ClipAction(Wrapper):
    """Clip actions to the ``Box`` action space's bounds, so a policy may output any real value.

    The action space becomes an unbounded ``Box`` of the same shape and dtype.
    """

    def __init__(self, env: Environment[Any, Any, Any]):
        box = _box(env, "ClipAction", bounded=False)
        super().__init__(env)
        self._inner = box
        self._replace_action_space(spaces.Box(-np.inf, np.inf, box.shape, box.dtype))

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        clipped = jnp.clip(action, self._inner.low, self._inner.high).astype(self._inner.dtype)
        return self.env.step(key, state, clipped)


class RescaleAction(Wrapper):
    """Take actions in ``[low, high]`` (default ``[-1, 1]``) and map them linearly onto the ``Box`` action space.

    The inner action space must be bounded; the action space becomes ``Box(low, high)`` of its shape.
    """

    def __init__(self, env: Environment[Any, Any, Any], low: float = -1.0, high: float = 1.0):
        box = _box(env, "RescaleAction", bounded=True)
        if not low < high:
            raise InvalidArgumentError(f"RescaleAction(low={low!r}, high={high!r}) needs low < high.")
        super().__init__(env)
        self._inner, self.low, self.high = box, low, high
        self._replace_action_space(spaces.Box(low, high, box.shape, box.dtype))

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        scale = (self._inner.high - self._inner.low) / (self.high - self.low)
        inner_action = (self._inner.low + (action - self.low) * scale).astype(self._inner.dtype)
        return self.env.step(key, state, inner_action)


__all__ = ["ClipAction", "RescaleAction"]
