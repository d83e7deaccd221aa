"""Drawing envpool environments: envpool's own ``render(env_ids)``, with an OpenGL context for MuJoCo tasks."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from envhub.plugin import RenderError, use_egl_when_headless


def is_mujoco(pool: Any) -> bool:
    """Whether ``pool`` is one of envpool's MuJoCo tasks (its C++ renderer needs a current OpenGL context)."""
    return any(base.__module__.startswith("envpool.mujoco") for base in type(pool).__mro__)


def frames(env: Any, pool: Any, pool_ids: np.ndarray) -> np.ndarray:
    """uint8 RGB frames ``(len(pool_ids), H, W, 3)`` of the envpool environments ``pool_ids`` of ``pool``."""
    if pool is None:
        raise RenderError(env.id, "its pool has not been created yet", "call init first")
    if getattr(pool, "_render_mode", None) != "rgb_array":
        raise RenderError(
            env.id,
            f"it was made with render_mode={getattr(pool, '_render_mode', None)!r}, and frames need 'rgb_array'",
            "leave render_mode out (envhub makes pools with 'rgb_array')",
        )
    if is_mujoco(pool):
        _make_gl_current(env)  # without one, MuJoCo aborts the whole process (a C++ FatalError)
    ids = np.array(pool_ids, np.int32).reshape(-1)  # a fresh, writeable array: envpool refuses read-only ones
    return np.asarray(pool.render(env_ids=ids), np.uint8)


def _make_gl_current(env: Any) -> None:
    """Create (once per environment object) and make current the OpenGL context MuJoCo draws into."""
    context = env.__dict__.get("_gl_context")
    if context is None:
        headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
        use_egl_when_headless()
        try:
            import mujoco

            windowed = getattr(getattr(mujoco, "GLContext", None), "__module__", "").startswith("mujoco.glfw")
            if headless and windowed:  # glfw without a display aborts the process: refuse instead
                raise RenderError(
                    env.id,
                    "mujoco was imported before envhub could pick EGL, so its OpenGL platform is glfw, which needs a display",
                    "set MUJOCO_GL=egl (or osmesa) in the environment before starting Python",
                )
            context = mujoco.GLContext(640, 480)
        except ImportError:
            raise RenderError(
                env.id,
                "envpool's MuJoCo renderer needs an OpenGL context from the Python package 'mujoco', which is not installed",
                'pip install "envhub-envpool[mujoco-render]" (or: pip install mujoco)',
            ) from None
        except RenderError:
            raise
        except Exception as exc:  # noqa: BLE001 - no display, no EGL/OSMesa, ...
            raise RenderError(
                env.id,
                f"no OpenGL context could be created for MuJoCo ({type(exc).__name__}: {exc})",
                "set MUJOCO_GL=egl (or osmesa) before anything imports mujoco",
            ) from exc
        env.__dict__["_gl_context"] = context
    context.make_current()


def free(env: Any) -> None:
    """Free the OpenGL context of ``env``, if it made one."""
    context = env.__dict__.pop("_gl_context", None)
    if context is not None:
        context.free()
