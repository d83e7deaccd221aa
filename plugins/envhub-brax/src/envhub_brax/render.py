"""Render a brax trajectory with brax's own renderers: an HTML viewer, or images (MuJoCo, needs OpenGL)."""

from __future__ import annotations

import os
from typing import Any

import jax
import numpy as np


def pipeline_states(env: Any, states: Any, index: int = 0) -> list[Any]:
    """brax pipeline states, one per frame, from envhub states of ``env``.

    Args:
        env: The envhub brax environment (or a wrapper around it) the states come from.
        states: A list of states, or one state whose leaves lead with time (as ``lax.scan`` stacks them).
        index: Which environment of the batch, when ``env`` has ``num_envs``.
    """
    from envhub_brax.environment import BraxState

    if isinstance(states, (list, tuple)):
        stacked = jax.tree.map(lambda *xs: np.stack(xs), *jax.device_get(list(states)))
    else:
        stacked = jax.device_get(states)
    if not isinstance(stacked, BraxState):
        raise TypeError(f"states must be envhub-brax states (BraxState), got {type(stacked).__name__}.")
    frames = stacked.brax.pipeline_state
    if env.num_envs is not None:
        frames = jax.tree.map(lambda x: x[:, index], frames)
    length = len(jax.tree.leaves(frames)[0])
    return [jax.tree.map(lambda x, t=t: x[t], frames) for t in range(length)]


def render_html(
    env: Any, states: Any, path: str | os.PathLike[str] | None = None, *, index: int = 0, height: int | str = 480
) -> str:
    """Return brax's HTML viewer of a trajectory (``brax.io.html.render``); write it to ``path`` if given.

    The page loads brax's viewer script from a CDN when opened.
    """
    from brax.io import html

    page: str = html.render(env.unwrapped.sys, pipeline_states(env, states, index), height=height, colab=False)
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
    return page


def render_images(
    env: Any, states: Any, *, index: int = 0, height: int = 240, width: int = 320, camera: str | None = None
) -> list[np.ndarray]:
    """Return one RGB image per frame with MuJoCo's renderer (``brax.io.image``); needs an OpenGL context."""
    from brax.io import image

    frames: list[np.ndarray] = image.render_array(
        env.unwrapped.sys, pipeline_states(env, states, index), height, width, camera
    )
    return frames
