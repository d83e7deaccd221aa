"""envhub backend for brax: every brax environment, with true truncation, real resets and one compile.

brax is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import envhub
from envhub_brax.environment import use_egl_when_headless
from envhub_brax.render import render_html, render_images

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

use_egl_when_headless()  # MuJoCo reads MUJOCO_GL once, when first imported (by brax): set it before

# How the conformance kit drives brax environments: a short time limit through episode_length.
CHECK_OPTIONS: dict[str, Any] = {"time_limit_kwarg": "episode_length", "time_limit": 7, "atol": 1e-4}
# brax's test environment "fast" uses no randomness at all (its reset is all zeros).
EXTRA_CHECK_OPTIONS: dict[str, dict[str, Any]] = {"fast": {"keys_matter": False}}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every name in brax's environment registry."""
    from envhub_brax.environment import import_brax_envs

    envs = import_brax_envs()
    for name in sorted(envs._envs):  # brax keeps its registry there; get_environment reads it
        reason = unavailable_reason(name)
        if reason is not None:
            register(name, None, unavailable=reason)
            continue
        register(
            name,
            functools.partial(make_brax_env, name),
            batching="native",
            description="brax (JAX physics)",
            check_options={**CHECK_OPTIONS, **EXTRA_CHECK_OPTIONS.get(name, {})},
        )


def unavailable_reason(name: str) -> str | None:
    """Why brax's ``name`` cannot run with the installed libraries, or ``None``."""
    import jax.numpy as jnp

    if name == "swimmer" and "a_min" not in inspect.signature(jnp.clip).parameters:
        # brax/fluid.py calls jnp.clip(..., a_min=...), a keyword this jax removed; swimmer is the
        # only registry environment with fluid forces, and it only supports the generalized backend.
        return "brax's swimmer calls jnp.clip(a_min=...), which the installed jax no longer accepts"
    return None


def make_brax_env(name: str, num_envs: int | None = None, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build brax ``name``; see ``BraxEnvironment`` for ``backend``, ``episode_length``, ``reset_mode``."""
    from envhub_brax.environment import BraxEnvironment

    return BraxEnvironment(name, num_envs=num_envs, **kwargs)


__all__ = ["envhub_register_envs", "make_brax_env", "render_html", "render_images"]
