"""Seeing what the agent does: the checks every ``env.render`` shares, and ``record`` to GIF, MP4 or HTML.

Backends draw through ``Environment._render(state, index)`` (and ``_render_html`` for brax); this
module refuses what no backend can draw (a traced state, a closed env) and checks what they return.
Writing files needs ``imageio`` (``pip install "envhub[render]>=0.1.0,<1"``, and ``imageio-ffmpeg`` for MP4),
imported only when ``record`` writes.
"""

from __future__ import annotations

import ctypes.util
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from envhub.core.arguments import positive_int
from envhub.errors import ForkAfterJaxWarning, InvalidArgumentError, MissingDependencyError, RenderError
from envhub.registry.plugin_api import compatible_core_range
from envhub.tools.rollout import Policy, rollout_length, scan_policy, schedule

if TYPE_CHECKING:  # annotations only: env.py calls into this module
    from envhub.core.env import Environment

#: The file types ``record`` writes, by extension.
FORMATS = (".gif", ".mp4", ".html")
# Always with the range: a bare "envhub[...]" could pick PyPI's unrelated envhub 1.x (docs/install.md).
_RENDER_EXTRA = f'pip install "envhub[render]{compatible_core_range()}", or: pip install imageio'
_VIDEO_EXTRA = f'pip install "envhub[video]{compatible_core_range()}", or: pip install imageio imageio-ffmpeg'


def record(
    env: Environment[Any, Any, Any],
    policy: Policy,
    key: jax.Array,
    steps: int,
    path: str | os.PathLike[str],
    *,
    index: int = 0,
    fps: int = 30,
    on_frame: Callable[[int, int], None] | None = None,
) -> int:
    """Run ``policy`` for ``steps`` steps from ``env.init`` and write what it did to ``path``; return the frame count.

    The episode is the one ``envhub.rollout(env, policy, key, steps)`` runs (same keys). JAX-native
    envs run it as one jitted ``lax.scan`` keeping every state, then draw each on the host; host envs
    (gymnasium, envpool) hold their state outside JAX and cannot redraw an old one, so they step
    eagerly (the policy jitted) and draw as they go. ``.gif`` and ``.mp4`` hold ``steps + 1`` frames
    of environment ``index`` (identical consecutive frames merge in a GIF); ``.html`` is brax's viewer.
    ``on_frame(i, total)`` reports progress.

    Raises:
        InvalidArgumentError: an unknown extension, ``steps < 1`` or ``fps < 1``.
        MissingDependencyError: ``imageio`` (GIF, MP4) or ``imageio-ffmpeg`` (MP4) is not installed.
        RenderError: the env cannot draw (``.html`` needs brax).
    """
    path = Path(path)
    suffix = check_path(path)
    steps = rollout_length("steps", steps, where="for record")
    fps = positive_int("fps", fps, where="for record")
    if suffix == ".html":
        if not env.is_jax_native:
            raise RenderError(env.id, "it is a host environment without an HTML viewer", "record to .gif or .mp4")
        states = _scan_states(env, policy, key, steps)
        page = env._render_html(states, index)
        path.write_text(page, encoding="utf-8")
        if on_frame is not None:
            on_frame(steps + 1, steps + 1)
        return steps + 1
    writer = _writer(suffix)
    batched_index = None if env.num_envs is None else index

    def draw(state: Any) -> np.ndarray:
        return env.render(state, batched_index)

    if env.is_jax_native:
        states = _scan_states(env, policy, key, steps)
        frames = []
        for t in range(steps + 1):
            frames.append(draw(jax.tree.map(lambda x, t=t: x[t], states)))
            _tick(on_frame, t, steps)
    else:
        frames = _eager_frames(env, policy, key, steps, draw, on_frame)
    writer(path, frames, fps)
    return len(frames)


def use_egl_when_headless() -> None:
    """On Linux without a display, default ``MUJOCO_GL`` to EGL (off-screen), unless mujoco is imported already.

    MuJoCo picks its OpenGL platform once, when first imported; its default (GLFW) needs a display and
    aborts the process when a headless renderer is created. Plugins whose library imports mujoco call
    this first (and so may scripts that import such a library before envhub's plugins).
    """
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if sys.platform.startswith("linux") and headless and "mujoco" not in sys.modules and _has_egl():
        os.environ.setdefault("MUJOCO_GL", "egl")


def _has_egl() -> bool:
    """Whether an EGL library can be loaded: without one, ``MUJOCO_GL=egl`` makes importing mujoco itself fail
    (PyOpenGL's ``'NoneType' object has no attribute 'eglQueryString'``, seen on a GPU server), so leave it unset."""
    return ctypes.util.find_library("EGL") is not None


def use_silent_sdl_drivers() -> None:
    """Default SDL's audio (and, without a display, video) driver to ``dummy``, unless the variable is set.

    ``pygame.init()`` in gymnasium's and gymnax's drawing code opens SDL audio, whose ALSA backend prints
    "ALSA lib ..." errors where there is no sound card, and without a display probes Wayland, whose client
    library prints "XDG_RUNTIME_DIR is invalid". Drawing frames needs neither. ``envhub record`` calls this.
    """
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # pygame's greeting goes to stdout
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


def check_path(path: str | os.PathLike[str]) -> str:
    """Return the lowercase extension of ``path`` if ``record`` can write it.

    Raises:
        InvalidArgumentError: the extension is not one of ``FORMATS``.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InvalidArgumentError(
            f"record path {str(path)!r} has extension {suffix or '(none)'!r}, which envhub cannot write: "
            f"use one of {', '.join(FORMATS)}."
        )
    return suffix


def _tick(on_frame: Callable[[int, int], None] | None, t: int, steps: int) -> None:
    if on_frame is not None:
        on_frame(t + 1, steps + 1)


def _scan_states(env: Environment[Any, Any, Any], policy: Policy, key: jax.Array, steps: int) -> Any:
    """Every state of the rollout (the first included), leaves leading with time, from one jitted scan."""

    def run(key: jax.Array) -> Any:
        (state, _), _, later = scan_policy(env, policy, key, steps, keep=lambda state, action, ts: state)
        return jax.tree.map(lambda first, rest: jax.numpy.concatenate([first[None], rest]), state, later)

    return jax.device_get(jax.jit(run)(key))


def _eager_frames(
    env: Environment[Any, Any, Any],
    policy: Policy,
    key: jax.Array,
    steps: int,
    draw: Callable[[Any], np.ndarray],
    on_frame: Callable[[int, int], None] | None,
) -> list[np.ndarray]:
    """Step a host env eagerly with the same keys as ``rollout`` and draw each state as it is reached."""
    act = jax.jit(policy)
    init_key, step_keys = schedule(key, steps)
    state, ts = env.init(init_key)
    frames = [draw(state)]
    _tick(on_frame, 0, steps)
    for t, step_key in enumerate(step_keys):
        policy_key, env_key = jax.random.split(step_key)
        state, ts = env.step(env_key, state, act(policy_key, ts.obs))
        frames.append(draw(state))
        _tick(on_frame, t + 1, steps)
    return frames


def _writer(suffix: str) -> Callable[[Path, list[np.ndarray], int], None]:
    """The writer for ``suffix``, importing its optional dependency now (before any rollout runs)."""
    try:
        import imageio.v2 as iio
    except ImportError:
        raise MissingDependencyError(f"Writing {suffix} files", "imageio", _RENDER_EXTRA) from None
    if suffix == ".gif":

        def gif(path: Path, frames: list[np.ndarray], fps: int) -> None:
            iio.mimwrite(path, list[Any](frames), format="GIF", duration=1000 / fps, loop=0)

        return gif
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        raise MissingDependencyError("Writing .mp4 files", "imageio-ffmpeg", _VIDEO_EXTRA) from None

    def mp4(path: Path, frames: list[np.ndarray], fps: int) -> None:
        even = [np.pad(f, ((0, f.shape[0] % 2), (0, f.shape[1] % 2), (0, 0))) for f in frames]  # yuv420p
        with warnings.catch_warnings():
            # imageio-ffmpeg starts ffmpeg with preexec_fn=os.setpgrp, so the fork runs Python's at-fork hooks:
            # JAX's and envhub's warn of a fork after JAX started, false alarms for a child that only execs.
            warnings.filterwarnings("ignore", r"os\.fork\(\) was called", RuntimeWarning)
            warnings.filterwarnings("ignore", category=ForkAfterJaxWarning)
            iio.mimwrite(path, list[Any](even), format="FFMPEG", fps=fps, macro_block_size=1)

    return mp4


__all__ = ["FORMATS", "check_path", "record", "use_egl_when_headless", "use_silent_sdl_drivers"]
