"""Users' own backend objects as envhub envs: ``from_gymnax``, ``from_brax`` (the other direction of the exports).

Each is the backend plugin's ``wrap_object(env, **kwargs)`` (``envhub.plugin.WrapObject``), found through the
registry: the core imports no plugin.
"""

from __future__ import annotations

from typing import Any

from envhub.core.env import Environment
from envhub.errors import InvalidArgumentError


def from_gymnax(env: Any, params: Any = None) -> Environment[Any, Any, Any]:
    """Wrap your own gymnax environment *object* (and optional ``EnvParams``) as an envhub env."""
    return wrap_object("gymnax", env, params=params)


def from_brax(env: Any, **kwargs: Any) -> Environment[Any, Any, Any]:
    """Wrap your own brax environment *object* as an envhub env (``episode_length``, ``reset_mode``,
    ``num_envs`` as for ``envhub.make("brax/...")``); no brax wrapper is stacked on it."""
    return wrap_object("brax", env, **kwargs)


def wrap_object(prefix: str, env: Any, **kwargs: Any) -> Environment[Any, Any, Any]:
    """The backend ``prefix``'s ``wrap_object(env, **kwargs)``, found through the registry.

    Loading the plugin checks that its ``wrap_object``, if any, is callable (``PluginIncompatibleError`` naming the
    plugin otherwise).

    Raises:
        InvalidArgumentError: the backend has no ``wrap_object``.
    """
    from envhub.registry.api import default_registry
    from envhub.registry.hookspecs import WRAP_ATTRIBUTE, WrapObject

    wrap: WrapObject | None = getattr(default_registry().plugin(prefix), WRAP_ATTRIBUTE, None)
    if wrap is None:
        raise InvalidArgumentError(f"backend {prefix!r} has no wrap_object(env, ...); it cannot wrap your own objects.")
    return wrap(env, **kwargs)


__all__ = ["from_brax", "from_gymnax", "wrap_object"]
