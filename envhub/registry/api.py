"""The module-level API over the default registry: ``envhub.make`` and friends (re-exported by ``envhub``)."""

from __future__ import annotations

from typing import Any

from envhub.core import pickling
from envhub.core.env import Environment
from envhub.registry.hub import Registry
from envhub.registry.specs import BackendStatus, EnvSpec

_default: Registry | None = None


def default_registry() -> Registry:
    """The registry behind ``envhub.make``, created (and discovered) on first use."""
    global _default
    if _default is None:
        _default = Registry()
    return _default


def make(
    env_id: str, *, num_envs: int | None = None, mesh: Any = None, validate_actions: bool | str = True, **kwargs: Any
) -> Environment[Any, Any, Any]:
    """Build the environment ``env_id`` (``"prefix/Name"``); ``kwargs`` go to the backend.

    ``num_envs=N`` returns a batched environment whose every leaf has a leading axis of ``N``;
    ``mesh`` (a one-axis ``jax.sharding.Mesh``) shards that batch over the mesh's devices.
    Action values (out-of-range discrete values, non-finite floats) raise ``ActionError`` eagerly and
    under ``envhub.checked``; ``validate_actions="strict"`` also stops plain ``jit`` (a host callback:
    no compile cache, no export), ``False`` skips the check (docs/errors.md, "Action values").
    """
    made_with = dict(kwargs, num_envs=num_envs, mesh=mesh, validate_actions=validate_actions)
    env = default_registry().make(env_id, num_envs=num_envs, mesh=mesh, validate_actions=validate_actions, **kwargs)
    pickling.record_make(env, make, env.id, made_with)  # pickle rebuilds it with make(env_id, **made_with)
    return env


def list_backends(*, deep: bool = False) -> list[BackendStatus]:
    """Every installed or registered backend with its status (``deep=True``: run every hook in full, importing backend libraries)."""
    return default_registry().list_backends(deep=deep)


def list_envs(prefix: str) -> list[EnvSpec]:
    """Every environment the backend ``prefix`` offers."""
    return default_registry().list_envs(prefix)


def register_backend(prefix: str, plugin: Any, *, replace: bool = False) -> None:
    """Register a plugin object or module in-process (notebooks, tests) without installing it."""
    default_registry().register_backend(prefix, plugin, replace=replace)


def unregister_backend(prefix: str) -> None:
    """Remove a backend from the default registry."""
    default_registry().unregister_backend(prefix)


__all__ = ["default_registry", "list_backends", "list_envs", "make", "register_backend", "unregister_backend"]
