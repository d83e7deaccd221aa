"""Frames of a gymnasium vector env: its own ``render()``, with a missing drawing library named by its install line.

gymnasium draws classic control, toy text and Box2D with pygame, the plugin's ``render`` extra; without it
gymnasium raises ``DependencyNotInstalled`` (no ``ImportError`` since gymnasium 1.0) from pygame's ``ImportError``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from envhub.plugin import MissingDependencyError, RenderError

#: How to install pygame, what gymnasium draws with: the plugin's ``render`` extra (gymnasium's classic-control).
RENDER_EXTRA = 'pip install "envhub-gymnasium[render]"'


def frames(env: Any, host: Any) -> np.ndarray:
    """uint8 RGB frames ``(N, H, W, 3)`` of every env of the gymnasium vector env ``host`` of the envhub env ``env``.

    Raises:
        RenderError: ``env`` was made without ``render_mode='rgb_array'``.
        MissingDependencyError: pygame is not installed (with ``RENDER_EXTRA``).
    """
    if not env.render_modes:
        raise RenderError(
            env.id,
            f"it was made with render_mode={env.kwargs.get('render_mode')!r}, and frames need 'rgb_array'",
            "make it with render_mode='rgb_array' (the default where the env offers it)",
        )
    try:
        drawn = host.render()
    except (gymnasium.error.DependencyNotInstalled, ImportError) as exc:
        missing = exc if isinstance(exc, ImportError) else exc.__cause__ or exc.__context__
        package = getattr(missing, "name", None) or str(exc).split(" ", 1)[0]
        if package != "pygame":  # another library (e.g. MuJoCo's): the host bridge reports gymnasium's own message
            raise
        raise MissingDependencyError(f"Drawing {env.id}", package, RENDER_EXTRA) from exc
    if isinstance(drawn, (list, tuple)):
        drawn = np.stack([np.asarray(f) for f in drawn])
    drawn = np.asarray(drawn)
    return drawn[None] if drawn.ndim == 3 else drawn


__all__ = ["RENDER_EXTRA", "frames"]
