"""Draw one gymnax state with gymnax's own visualizer (matplotlib, off screen)."""

from __future__ import annotations

from typing import Any

import numpy as np

# The environments gymnax's Visualizer draws (gymnax.visualize.visualizer.Visualizer.init).
DRAWABLE = frozenset(
    {
        "Acrobot-v1",
        "CartPole-v1",
        "Pendulum-v1",
        "MountainCar-v0",
        "MountainCarContinuous-v0",
        "Catch-bsuite",
        "Asterix-MinAtar",
        "Breakout-MinAtar",
        "Freeway-MinAtar",
        "Seaquest-MinAtar",
        "SpaceInvaders-MinAtar",
        "Pong-misc",
        "PointRobot-misc",
        "MetaMaze-misc",
        "FourRooms-misc",
    }
)


def draw(gymnax_env: Any, params: Any, state: Any, size: tuple[float, float] = (4.0, 3.2), dpi: int = 80) -> np.ndarray:
    """One uint8 RGB frame of ``state``, drawn as gymnax's ``Visualizer`` draws its first animation frame."""
    from gymnax.visualize.visualizer import Visualizer
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    vis = Visualizer.__new__(Visualizer)  # its __init__ opens a pyplot figure; an off-screen one is enough
    vis.env, vis.env_params, vis.state_seq, vis.reward_seq = gymnax_env, params, [state], None
    vis.fig = Figure(figsize=size, dpi=dpi)
    vis.ax = vis.fig.add_subplot(1, 1, 1)
    canvas = FigureCanvasAgg(vis.fig)
    vis.init()
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
