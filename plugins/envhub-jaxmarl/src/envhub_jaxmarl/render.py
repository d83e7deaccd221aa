"""Draw one state of jaxmarl's MPE, SMAX or Overcooked (v1) environments as uint8 RGB pixels, off screen.

MPE: jaxmarl's own ``MPEVisualizer`` opens a pyplot window and prints; this draws the same circles (positions,
radii and colours of the env's entities) on an off-screen matplotlib canvas. SMAX: the living units as its
visualizer's circles (allies blue, enemies green; its shot markers need the step's actions, so not drawn).
Overcooked: the tiles of jaxmarl's ``OvercookedVisualizer``, as its ``animate`` draws each frame (no window).
Coin game: the two agents and their coins on its 3x3 grid (jaxmarl 0.2.0's own ``render`` of it calls
matplotlib's ``tostring_rgb``, removed in matplotlib 3.10).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def drawer(name: str, family: str) -> Callable[[Any, Any], np.ndarray] | None:
    """The function drawing a state of jaxmarl ``name`` (of ``family``), or None: the MPE and SMAX families, the
    coin game and Overcooked v1 draw (Hanabi's ``render`` prints text; Overcooked v2's tiles are not mapped)."""
    by_family = {"mpe": draw_mpe, "smax": draw_smax, "coin_game": draw_coin_game}
    return by_family.get(family) or (draw_overcooked if name == "overcooked" else None)


def _circles(extent: tuple[float, float, float, float], circles: list[tuple[Any, float, Any]], text: str,
             size: float = 4.0, dpi: int = 64) -> np.ndarray:  # fmt: skip
    """Filled ``(centre, radius, colour)`` circles over ``extent`` (x0, x1, y0, y1), ``text`` in the top left."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    fig = Figure(figsize=(size, size), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_xticks([])
    ax.set_yticks([])
    for centre, radius, colour in circles:
        ax.add_patch(Circle(tuple(np.asarray(centre)), float(radius), color=colour))
    x0, x1, y0, y1 = extent
    ax.text(x0 + 0.01 * (x1 - x0), y1 - 0.01 * (y1 - y0), text, va="top")
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def draw_mpe(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one MPE ``state`` of ``marl_env``: the arena from -2 to 2, 256 px a side."""
    positions, radii = np.asarray(state.p_pos), np.asarray(marl_env.rad)
    circles = [(positions[i], radii[i], np.asarray(marl_env.colour[i]) / 255) for i in range(marl_env.num_entities)]
    return _circles((-2, 2, -2, 2), circles, f"step {int(state.step)}")


def draw_smax(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one SMAX ``state``: the living units on the map, allies blue, enemies green."""
    smax, inner = getattr(marl_env, "_env", marl_env), getattr(state, "state", state)  # HeuristicEnemySMAX wraps
    radii = np.asarray(smax.unit_type_radiuses)[np.asarray(inner.unit_types)]
    positions, alive = np.asarray(inner.unit_positions), np.asarray(inner.unit_alive)
    circles = [
        (positions[i], radii[i], "blue" if i < smax.num_allies else "green") for i in range(len(alive)) if alive[i]
    ]
    return _circles((0, smax.map_width, 0, smax.map_height), circles, f"step {int(inner.step)}")


#: The coin game's drawing: its agents, then their (smaller) coins on top, at the cells' centres.
COIN_GAME = (("red_pos", 0.4, (1.0, 0.0, 0.0)), ("blue_pos", 0.4, (0.0, 0.0, 1.0)),
             ("red_coin_pos", 0.2, (1.0, 0.6, 0.6)), ("blue_coin_pos", 0.2, (0.6, 0.6, 1.0)))  # fmt: skip


def draw_coin_game(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one coin game ``state``: the agents (red, blue) and coins (light red, light blue)."""
    circles = [(np.asarray(getattr(state, field)) + 0.5, radius, colour) for field, radius, colour in COIN_GAME]
    return _circles((0, 3, 0, 3), circles, f"step {int(state.step)}")


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
