"""envhub: one functional API for reinforcement-learning environments in JAX, any backend."""

from __future__ import annotations

import importlib
import types

from envhub import errors, spaces, wrappers
from envhub.core import kwargs, pickling
from envhub.core.checked import checked
from envhub.core.env import Environment
from envhub.core.kwargs import Kwarg
from envhub.core.types import TimeStep
from envhub.errors import EnvKwargsError
from envhub.host.environment import HostEnvironment, HostState, HostStep
from envhub.native.environment import JaxEnvironment, JaxState, JaxStep
from envhub.registry.api import default_registry, list_backends, list_envs, make, register_backend, unregister_backend
from envhub.registry.hookspecs import hookimpl
from envhub.registry.hub import Registry
from envhub.registry.plugin_api import PLUGIN_API, SUPPORTED_APIS
from envhub.registry.specs import BackendStatus, EnvSpec, check_options_for
from envhub.tools.render import record
from envhub.tools.rollout import Trajectory, Transition, random_policy, rollout
from envhub.version import __version__
from envhub.wrappers import Wrapper, sharding

pickling.install_fork_hook()


def __getattr__(name: str) -> types.ModuleType:
    """Import ``envhub.interop`` on first use of ``envhub.interop``, so that ``import envhub`` does not."""
    if name == "interop":
        return importlib.import_module("envhub.interop")
    raise AttributeError(f"module 'envhub' has no attribute {name!r}")


__all__ = [
    "PLUGIN_API",
    "SUPPORTED_APIS",
    "__version__",
    "BackendStatus",
    "EnvKwargsError",
    "EnvSpec",
    "Environment",
    "HostEnvironment",
    "HostState",
    "HostStep",
    "JaxEnvironment",
    "JaxState",
    "JaxStep",
    "Kwarg",
    "Registry",
    "TimeStep",
    "Trajectory",
    "Transition",
    "Wrapper",
    "check_options_for",
    "checked",
    "default_registry",
    "errors",
    "sharding",
    "hookimpl",
    "kwargs",
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
