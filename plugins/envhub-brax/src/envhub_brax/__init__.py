"""envhub backend for brax: every brax environment, with true truncation, real resets and one compile.

Built on ``envhub.JaxEnvironment``: the batch, time limit and same-step reset are the core's.

brax is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import functools
from typing import Any

import envhub
from envhub.plugin import use_egl_when_headless
from envhub_brax.render import render_html, render_images

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

use_egl_when_headless()  # MuJoCo reads MUJOCO_GL once, when first imported (by brax): set it before

# How the conformance kit drives brax environments (fields of envhub.testing.Options, "*" for all).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    "*": {"time_limit_kwarg": "max_episode_steps", "time_limit": 7, "atol": 1e-4},
    "fast": {"keys_matter": False},  # brax's test environment uses no randomness (its reset is all zeros)
}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every name in brax's environment registry."""
    from envhub_brax import building
    from envhub_brax.building import default_backend, import_brax_envs

    envs = import_brax_envs()
    for name in sorted(envs._envs):  # brax keeps its registry there; get_environment reads it
        backend = default_backend(name)
        register(
            name,
            functools.partial(make_brax_env, name),
            batching="native",
            description=f"brax (JAX physics, {backend} pipeline by default)" if backend else "brax (no physics)",
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(building.declared_kwargs, name),
        )


def make_brax_env(name: str, num_envs: int | None = None, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build brax ``name``; see ``BraxEnvironment`` for ``backend``, ``max_episode_steps``, ``reset_mode``, ``reset_spares``."""
    from envhub_brax.environment import BraxEnvironment

    return BraxEnvironment(name, num_envs=num_envs, **kwargs)


__all__ = ["envhub_register_envs", "make_brax_env", "render_html", "render_images"]


def wrap_object(env: Any, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """A user's own brax environment object as an envhub env (``envhub.interop.from_brax``)."""
    from envhub_brax.environment import BraxEnvironment

    return BraxEnvironment.from_env(env, **kwargs)
