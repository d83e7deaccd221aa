"""What ``Environment.render`` accepts and returns: a concrete state, an index in range, uint8 RGB frames."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from envhub.errors import InvalidArgumentError, RenderError


def drawable_index(env_id: str, num_envs: int | None, state: Any, index: Any) -> int | None:
    """``index`` as an int (or None) once ``state`` is concrete and ``index`` names one env of the batch.

    Raises:
        RenderError: ``state`` is traced (render was called inside jit, vmap or scan).
        InvalidArgumentError: ``index`` is out of range, or given for an unbatched env.
    """
    if any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(state)):
        raise RenderError(
            env_id,
            "the state is traced (render was called inside jax.jit, vmap or scan), and drawing needs concrete values",
            "call env.render(state) outside jit on a state a jitted function returned",
        )
    if index is None:
        return None
    if (
        num_envs is None
        or isinstance(index, bool)
        or not isinstance(index, (int, np.integer))
        or not 0 <= index < num_envs
    ):
        rule = "the env is not batched, so leave index out" if num_envs is None else f"use 0 <= index < {num_envs}"
        raise InvalidArgumentError(f"render index={index!r} for {env_id!r} is out of range: {rule}.")
    return int(index)


def checked_frames(env_id: str, frames: Any, *, batched: bool) -> np.ndarray:
    """The backend's ``frames`` as uint8 RGB: ``(H, W, 3)``, or ``(N, H, W, 3)`` when ``batched``.

    Raises:
        RenderError: the backend returned another dtype or rank.
    """
    frames = np.asarray(frames)
    want = 4 if batched else 3
    if frames.dtype != np.uint8 or frames.ndim != want or frames.shape[-1] != 3:
        raise RenderError(
            env_id,
            f"its backend returned {frames.dtype}{list(frames.shape)}, not uint8 RGB of rank {want}",
            "report this to the plugin's authors",
        )
    return frames


def draw_each(draw_one: Callable[[Any], Any], states: Any, num_envs: int | None, index: int | None) -> Any:
    """Frames of host-side ``states`` (``jax.device_get`` of a state's leaves): ``draw_one(states)`` for an
    unbatched env, else ``draw_one`` of env ``index``, or of every env stacked when ``index`` is None."""
    if num_envs is None:
        return draw_one(states)
    one = lambda i: draw_one(jax.tree.map(lambda x: x[i], states))  # noqa: E731
    return one(index) if index is not None else np.stack([one(i) for i in range(num_envs)])


__all__ = ["checked_frames", "draw_each", "drawable_index"]
