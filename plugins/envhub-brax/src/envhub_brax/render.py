"""Render a brax trajectory with brax's own renderers: an HTML viewer, or images (MuJoCo, needs OpenGL)."""

from __future__ import annotations

import os
from typing import Any

import jax
import numpy as np

from envhub.plugin import JaxState


def pipeline_states(env: Any, states: Any, index: int = 0) -> list[Any]:
    """brax pipeline states, one per frame, from envhub states of ``env``.

    Args:
        env: The envhub brax environment (or a wrapper around it) the states come from.
        states: A list of states, or one state whose leaves lead with time (as ``lax.scan`` stacks them).
        index: Which environment of the batch, when ``env`` has ``num_envs``.
    """
    if isinstance(states, (list, tuple)):
        stacked = jax.tree.map(lambda *xs: np.stack(xs), *jax.device_get(list(states)))
    else:
        stacked = jax.device_get(states)
    if not isinstance(stacked, JaxState):
        raise TypeError(f"states must be envhub-brax states (envhub.JaxState), got {type(stacked).__name__}.")
    frames = stacked.env.pipeline_state
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


def draw(env: Any, state: Any, index: int | None, *, height: int = 240, width: int = 320) -> np.ndarray:
    """uint8 RGB frames of one envhub-brax state (``(N, H, W, 3)`` for a batch unless ``index``), with MuJoCo.

    One ``mujoco.Renderer`` per environment object is kept (and freed by ``close()``); it needs an
    OpenGL context: EGL or OSMesa when there is no display (``MUJOCO_GL``).
    """
    import mujoco

    from envhub.plugin import RenderError

    pipeline = jax.device_get(state.env.pipeline_state)
    if env.num_envs is not None:
        indices = range(env.num_envs) if index is None else [index]
        batch = [jax.tree.map(lambda x, i=i: x[i], pipeline) for i in indices]
    else:
        batch = [pipeline]
    model = env.sys.mj_model
    renderer = env.__dict__.get("_mj_renderer")
    if renderer is None:
        try:
            renderer = mujoco.Renderer(model, height=height, width=width)
        except Exception as exc:  # noqa: BLE001 - MuJoCo raises FatalError, RuntimeError, ... without OpenGL
            raise RenderError(
                env.id,
                f"MuJoCo's renderer needs an OpenGL context and could not create one ({type(exc).__name__}: {exc})",
                "set MUJOCO_GL=egl (or osmesa) before importing brax, or record to .html (brax's web viewer)",
            ) from exc
        env.__dict__["_mj_renderer"] = renderer
    frames = []
    for ps in batch:
        data = mujoco.MjData(model)
        data.qpos, data.qvel = ps.q, ps.qd
        if hasattr(ps, "mocap_pos") and hasattr(ps, "mocap_quat"):
            data.mocap_pos, data.mocap_quat = ps.mocap_pos, ps.mocap_quat
        mujoco.mj_forward(model, data)
        renderer.update_scene(data, camera=-1)
        frames.append(np.asarray(renderer.render(), np.uint8))
    stacked = np.stack(frames)
    return stacked if env.num_envs is not None and index is None else stacked[0]
