"""Draw one MPE state: its agents and landmarks as jaxmarl's MPE visualizer draws them (matplotlib, off screen).

jaxmarl's own ``MPEVisualizer`` opens a pyplot window and prints; this draws the same circles (positions,
radii and colours of the env's entities) on an off-screen canvas and returns the pixels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: The families envhub draws: MPE (the others' ``render`` in jaxmarl 0.2.0 prints text or needs pyplot).
DRAWABLE = frozenset({"mpe"})


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
