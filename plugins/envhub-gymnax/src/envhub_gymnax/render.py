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


#: How to install what gymnax's visualizer draws with (pygame, through gymnasium), the plugin's ``render`` extra.
RENDER_EXTRA = 'pip install "envhub-gymnax[render]"'


def draw(env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one gymnax ``state`` of the envhub environment ``env``.

    Raises:
        MissingDependencyError: a drawing library is missing (pygame for classic control), with ``RENDER_EXTRA``.
    """
    from gymnasium.error import DependencyNotInstalled  # gymnax requires gymnasium

    from envhub.plugin import MissingDependencyError

    name = env.gymnax_env.name
    try:
        from gymnax.visualize import vis_gym

        if name in vis_gym.SUPPORTED_GYM_ENVS:
            return _gym_frame(env, vis_gym, name, state)
        return _matplotlib_frame(env.gymnax_env, env.params, state)
    # gymnasium >= 1.0 raises DependencyNotInstalled (no ImportError) from the ImportError of pygame
    except (ImportError, DependencyNotInstalled) as exc:
        missing = exc if isinstance(exc, ImportError) else exc.__cause__
        package = getattr(missing, "name", None) or "pygame"
        raise MissingDependencyError(f"Drawing {env.id}", package, RENDER_EXTRA) from exc


def _gym_frame(env: Any, vis_gym: Any, name: str, state: Any) -> np.ndarray:
    """Classic control: gymnasium's own renderer, as gymnax's visualizer does, one gymnasium env per envhub env."""
    import gymnasium

    gym_env = env.__dict__.get("_gym_renderer")
    if gym_env is None:
        gym_env = gymnasium.make(name, render_mode="rgb_array")
        gym_env.reset(seed=0)
        vis_gym.set_gym_params(gym_env.unwrapped, name, env.params)
        env.__dict__["_gym_renderer"] = gym_env
    gym_env.unwrapped.state = vis_gym.get_gym_state(state, name)
    if name == "Pendulum-v1":
        gym_env.unwrapped.last_u = np.asarray(state.last_u, dtype=np.float64)
    return np.asarray(gym_env.render(), np.uint8)


def _matplotlib_frame(
    gymnax_env: Any, params: Any, state: Any, size: tuple[float, float] = (4.0, 3.2), dpi: int = 80
) -> np.ndarray:
    """The first animation frame gymnax's ``Visualizer`` draws, on an off-screen matplotlib canvas."""
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
