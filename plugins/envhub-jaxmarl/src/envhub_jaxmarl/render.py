"""Draw one state of jaxmarl's MPE or Overcooked (v1) environments as uint8 RGB pixels, off screen.

MPE: jaxmarl's own ``MPEVisualizer`` opens a pyplot window and prints; this draws the same circles (positions,
radii and colours of the env's entities) on an off-screen matplotlib canvas. Overcooked: the tiles of
jaxmarl's ``OvercookedVisualizer``, as its ``animate`` draws each frame (no window).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: What envhub draws: the MPE family and Overcooked v1 (the others' ``render`` in jaxmarl 0.2.0 prints text
#: or draws into a pyplot window).
DRAWABLE_FAMILIES, DRAWABLE_NAMES = frozenset({"mpe"}), frozenset({"overcooked"})


def drawer(name: str, family: str) -> Callable[[Any, Any], np.ndarray] | None:
    """The function drawing a state of jaxmarl ``name`` (of ``family``), or None."""
    if family in DRAWABLE_FAMILIES:
        return draw_mpe
    return draw_overcooked if name in DRAWABLE_NAMES else None


def draw_mpe(marl_env: Any, state: Any, size: float = 4.0, dpi: int = 64) -> np.ndarray:
    """One uint8 RGB frame of one MPE ``state`` of ``marl_env``: the arena from -2 to 2, the step in a corner."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    fig = Figure(figsize=(size, size), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(-2, 2)
    ax.set_ylim(-2, 2)
    ax.set_xticks([])
    ax.set_yticks([])
    positions, radii = np.asarray(state.p_pos), np.asarray(marl_env.rad)
    for i in range(marl_env.num_entities):
        ax.add_patch(Circle(tuple(positions[i]), float(radii[i]), color=np.asarray(marl_env.colour[i]) / 255))
    ax.text(-1.95, 1.95, f"step {int(state.step)}", va="top")
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def draw_overcooked(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one Overcooked ``state``: the kitchen's tiles, 32 pixels each."""
    from jaxmarl.viz.overcooked_visualizer import TILE_PIXELS, OvercookedVisualizer

    padding = marl_env.agent_view_size - 2  # the maze map is padded for the agents' views
    grid = np.asarray(state.maze_map[padding:-padding, padding:-padding, :])
    frame = OvercookedVisualizer._render_grid(
        grid,
        tile_size=TILE_PIXELS,
        agent_dir_idx=np.asarray(state.agent_dir_idx),
        agent_inv=np.asarray(state.agent_inv),
    )
    return np.asarray(frame, np.uint8)
