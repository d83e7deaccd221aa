"""envhub backend for MuJoCo Playground: every id of ``mujoco_playground.registry``, with true truncation,
real resets and one compile.

Built on ``envhub.JaxEnvironment``: the batch, time limit and same-step reset are the core's
(playground's ``EpisodeWrapper`` and ``BraxAutoResetWrapper`` are not used).

mujoco_playground is imported lazily, inside the factories: listing reads its registry tables
without importing it (importing MJX takes tens of seconds on a small CPU), see ``listing``.
"""

from __future__ import annotations

import functools
from typing import Any

import envhub
import envhub.plugin
from envhub.plugin import use_egl_when_headless

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

use_egl_when_headless()  # MuJoCo reads MUJOCO_GL once, when first imported (by playground): set it before

# How the conformance kit drives playground environments (fields of envhub.testing.Options, "*" for all).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    "*": {"time_limit_kwarg": "max_episode_steps", "time_limit": 7, "atol": 1e-4},
}

SUITES = {"dm_control_suite": "DeepMind Control Suite", "locomotion": "locomotion", "manipulation": "manipulation"}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every id of playground's registry; ids that cannot run here are listed with the reason."""
    from envhub_playground.listing import registered_envs, unavailable_reason

    for name, suite in registered_envs():
        description = f"MuJoCo Playground ({SUITES.get(suite, suite)}, MJX)"
        reason = unavailable_reason(suite)
        if reason is not None:
            register(name, None, unavailable=reason, description=description)
            continue
        register(
            name,
            functools.partial(make_playground_env, name),
            batching="native",
            description=description,
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(accepted_kwargs, name),
        )


def make_playground_env(name: str, num_envs: int | None = None, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build playground ``name``; see ``PlaygroundEnvironment`` for ``max_episode_steps``, ``impl``,
    ``config``, ``config_overrides``, ``reset_mode``, ``reset_spares`` and config fields as kwargs."""
    from envhub_playground.environment import PlaygroundEnvironment

    return PlaygroundEnvironment(name, num_envs=num_envs, **kwargs)


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("playground/<name>", ...)`` takes: ``impl``, ``config``, ``config_overrides``, top-level
    config fields, envhub's."""
    from typing import Literal

    from envhub_playground.importing import import_registry

    registry = import_registry()
    config = registry.get_default_config(name)
    fields = {k: config[k] for k in config.keys()}
    limit = fields.pop("episode_length", 1000)
    fields.pop("impl", None)  # declared below, with its choices
    return {
        "impl": envhub.Kwarg(
            Literal["jax", "warp", "c", "cpp"] | None, None, "MuJoCo implementation (default: jax on a CPU)"
        ),
        "config": envhub.Kwarg(doc="a playground ConfigDict replacing the defaults"),
        "config_overrides": envhub.Kwarg(dict | None, None, "nested config overrides"),
        **{k: envhub.Kwarg(envhub.plugin.infer_type(v), v, "playground config field") for k, v in fields.items()},
        **envhub.plugin.jax_kwargs(limit, native="episode_length"),
    }


__all__ = ["CHECK_OPTIONS", "envhub_register_envs", "make_playground_env"]
