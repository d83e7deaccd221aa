"""envhub: one functional API for reinforcement-learning environments in JAX, any backend.

The public names load on first use (PEP 562): ``import envhub`` alone imports no jax, so that
``envhub list`` and ``envhub --version`` start fast; the first ``envhub.<name>`` imports them all, as
an eager package would. ``envhub.interop`` loads only when used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from envhub.core import pickling
from envhub.version import __version__

if TYPE_CHECKING:  # what type checkers and readers see; at run time __getattr__ imports these
    from envhub import errors, spaces, wrappers
    from envhub.core import kwargs
    from envhub.core.checked import checked
    from envhub.core.env import Environment
    from envhub.core.kwargs import Kwarg
    from envhub.core.types import TimeStep
    from envhub.errors import EnvKwargsError
    from envhub.host.environment import HostEnvironment, HostState, HostStep
    from envhub.native.environment import JaxEnvironment, JaxState, JaxStep
    from envhub.registry.api import (
        default_registry,
        list_backends,
        list_envs,
        make,
        register_backend,
        unregister_backend,
    )
    from envhub.registry.hookspecs import hookimpl
    from envhub.registry.hub import Registry
    from envhub.registry.plugin_api import PLUGIN_API, SUPPORTED_APIS
    from envhub.registry.specs import BackendStatus, EnvSpec, check_options_for
    from envhub.tools.render import record
    from envhub.tools.rollout import Trajectory, Transition, random_policy, rollout
    from envhub.wrappers import Wrapper, sharding

#: Each public name's module (a module itself where the attribute is empty).
_PUBLIC = {
    "errors": ("envhub.errors", ""),
    "spaces": ("envhub.spaces", ""),
    "wrappers": ("envhub.wrappers", ""),
    "kwargs": ("envhub.core.kwargs", ""),
    "checked": ("envhub.core.checked", "checked"),
    "Environment": ("envhub.core.env", "Environment"),
    "Kwarg": ("envhub.core.kwargs", "Kwarg"),
    "TimeStep": ("envhub.core.types", "TimeStep"),
    "EnvKwargsError": ("envhub.errors", "EnvKwargsError"),
    **{n: ("envhub.host.environment", n) for n in ("HostEnvironment", "HostState", "HostStep")},
    **{n: ("envhub.native.environment", n) for n in ("JaxEnvironment", "JaxState", "JaxStep")},
    **{
        n: ("envhub.registry.api", n)
        for n in ("default_registry", "list_backends", "list_envs", "make", "register_backend", "unregister_backend")
    },
    "hookimpl": ("envhub.registry.hookspecs", "hookimpl"),
    "Registry": ("envhub.registry.hub", "Registry"),
    "PLUGIN_API": ("envhub.registry.plugin_api", "PLUGIN_API"),
    "SUPPORTED_APIS": ("envhub.registry.plugin_api", "SUPPORTED_APIS"),
    **{n: ("envhub.registry.specs", n) for n in ("BackendStatus", "EnvSpec", "check_options_for")},
    "record": ("envhub.tools.render", "record"),
    **{n: ("envhub.tools.rollout", n) for n in ("Trajectory", "Transition", "random_policy", "rollout")},
    "Wrapper": ("envhub.wrappers", "Wrapper"),
    "sharding": ("envhub.wrappers.sharding", ""),
}

pickling.install_fork_hook()


def __getattr__(name: str) -> Any:
    """Import the public names on first use (all at once, as an eager package would); submodules by name."""
    if name in _PUBLIC and _PUBLIC[name][0] != f"{__name__}.{name}":  # envhub.errors: only that module
        for public, (module, attribute) in _PUBLIC.items():
            loaded = importlib.import_module(module)
            globals()[public] = getattr(loaded, attribute) if attribute else loaded
        return globals()[name]
    if not name.startswith("_"):  # envhub.interop, envhub.tools, ...: a submodule, imported on first use
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module 'envhub' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, "interop"})


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
