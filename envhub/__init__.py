"""envhub: one functional API for reinforcement-learning environments in JAX, any backend."""

from __future__ import annotations

from typing import Any

from envhub import errors, sharding, spaces, wrappers
from envhub._version import __version__
from envhub.env import Environment
from envhub.hookspecs import hookimpl
from envhub.host import HostEnvironment, HostState, HostStep
from envhub.plugin_api import PLUGIN_API, SUPPORTED_APIS
from envhub.registry import BackendStatus, EnvSpec, Registry, default_registry
from envhub.render import record
from envhub.rollout import Trajectory, Transition, random_policy, rollout
from envhub.types import TimeStep
from envhub.wrappers import Wrapper

__all__ = [
    "PLUGIN_API",
    "SUPPORTED_APIS",
    "__version__",
    "BackendStatus",
    "EnvSpec",
    "Environment",
    "HostEnvironment",
    "HostState",
    "HostStep",
    "Registry",
    "TimeStep",
    "Trajectory",
    "Transition",
    "Wrapper",
    "default_registry",
    "errors",
    "sharding",
    "hookimpl",
    "list_backends",
    "list_envs",
    "make",
    "random_policy",
    "record",
    "register_backend",
    "rollout",
    "spaces",
    "unregister_backend",
    "wrappers",
]


def make(env_id: str, *, num_envs: int | None = None, mesh: Any = None, **kwargs: Any) -> Environment[Any, Any, Any]:
    """Build the environment ``env_id`` (``"prefix/Name"``); ``kwargs`` go to the backend.

    ``num_envs=N`` returns a batched environment whose every leaf has a leading axis of ``N``;
    ``mesh`` (a one-axis ``jax.sharding.Mesh``) shards that batch over the mesh's devices.
    """
    return default_registry().make(env_id, num_envs=num_envs, mesh=mesh, **kwargs)


def list_backends() -> list[BackendStatus]:
    """Every installed or registered backend with its status."""
    return default_registry().list_backends()


def list_envs(prefix: str) -> list[EnvSpec]:
    """Every environment the backend ``prefix`` offers."""
    return default_registry().list_envs(prefix)


def register_backend(prefix: str, plugin: Any, *, replace: bool = False) -> None:
    """Register a plugin object or module in-process (notebooks, tests) without installing it."""
    default_registry().register_backend(prefix, plugin, replace=replace)


def unregister_backend(prefix: str) -> None:
    """Remove a backend from the default registry."""
    default_registry().unregister_backend(prefix)
