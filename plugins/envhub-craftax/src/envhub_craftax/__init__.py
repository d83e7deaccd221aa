"""envhub backend for Craftax: Craftax and Craftax-Classic, symbolic and pixel observations, pure JAX.

craftax is imported lazily, inside the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

import envhub
import envhub.plugin

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# The names craftax.craftax_env.make_craftax_env_from_name knows (craftax keeps no registry to read).
ENVS = ("Craftax-Symbolic-v1", "Craftax-Pixels-v1", "Craftax-Classic-Symbolic-v1", "Craftax-Classic-Pixels-v1")

# Its "-AutoReset-v1" names are the same environments with craftax's own auto-reset, which envhub
# replaces by its same-step one on every environment: listed, with the id to use instead.
AUTO_RESET_ALIASES = {name.replace("-v1", "-AutoReset-v1"): name for name in ENVS}

# How the conformance kit must drive the environments (fields of envhub.testing.Options).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {"*": {"time_limit_kwarg": "max_episode_steps"}}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register craftax's environments (nothing is imported or built here)."""
    for name in ENVS:
        register(
            name,
            functools.partial(make_craftax_env, name),
            batching="native",
            description="Craftax (JAX-native)",
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(accepted_kwargs, name),
        )
    for alias, name in AUTO_RESET_ALIASES.items():
        reason = f"envhub auto-resets every environment in the same step itself: use 'craftax/{name}'"
        register(alias, None, unavailable=reason)


def make_craftax_env(name: str, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build craftax ``name``: ``params`` replaces its ``EnvParams``; kwargs naming ``EnvParams`` fields
    update them (``max_episode_steps`` sets ``max_timesteps``, craftax's name, also accepted);
    ``static_env_params`` goes to its constructor; ``num_envs``, ``reset_mode``, ``reset_spares``,
    ``reset_chunk`` to envhub (see ``CraftaxEnvironment``)."""
    from envhub_craftax.environment import CraftaxEnvironment

    return CraftaxEnvironment(name, **kwargs)


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("craftax/<name>", ...)`` takes: ``params``, ``static_env_params``, every ``EnvParams`` field."""
    import dataclasses

    from craftax.craftax_env import make_craftax_env_from_name

    params = make_craftax_env_from_name(name, auto_reset=False).default_params
    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    limit = fields.pop("max_timesteps", None)
    return {
        "params": envhub.Kwarg(type(params) | None, None, "craftax EnvParams replacing the defaults"),
        "static_env_params": envhub.Kwarg(doc="craftax StaticEnvParams (world size and the like)"),
        **{k: envhub.Kwarg(envhub.plugin.infer_type(v), v, "craftax EnvParams field") for k, v in fields.items()},
        **envhub.plugin.jax_kwargs(None if limit is None else int(limit), native="max_timesteps"),
        "reset_chunk": envhub.Kwarg(
            int | None | Literal["auto"], "auto", "worlds generated together in batched resets ('auto': 16 on CPU)"
        ),
    }
