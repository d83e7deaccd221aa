"""Physical parameters as data: gravity, body masses, sliding friction and actuator gains of the env's MJX model.

The four fields, their bounds and how they enter the model are ``envhub.plugin.MjxParams``' (shared with
envhub-brax), written into ``mjx_model`` as playground's own domain randomizers (``registry.get_domain_randomizer``)
do, into a shallow copy of the env traced with it (the env object is never changed).
"""

from __future__ import annotations

import copy
from typing import Any

import jax

from envhub.plugin import MjxParams


class ModelParams(MjxParams):
    """The params of one playground env: ``envhub.plugin.MjxParams`` of its ``mjx_model``."""

    def env_with(self, env: Any, params: dict[str, jax.Array]) -> Any:
        """A copy of playground's ``env`` whose ``mjx_model`` holds ``params``."""
        return with_model(env, self.model(env.mjx_model, params))


def model_params(env: Any) -> ModelParams | None:
    """The params of playground's ``env``; ``None`` where it keeps no ``_mjx_model`` of its own to replace."""
    if "_mjx_model" not in getattr(env, "__dict__", {}):
        return None
    return ModelParams(env.mjx_model, env.mj_model)


def with_model(env: Any, model: Any) -> Any:
    """A shallow copy of playground's ``env`` whose ``mjx_model`` is ``model`` (what playground's own
    ``BraxDomainRandomizationVmapWrapper`` swaps in, there by assignment to the env)."""
    new = copy.copy(env)
    new._mjx_model = model
    return new
