"""Interop: envhub environments as gymnasium environments, and users' own env objects as envhub ones.

gymnasium, gymnax and brax are imported inside the functions that need them, never by ``import
envhub``. The exports (``gym_env``, ``gym_vector``) compile one call per step (``compiled``);
``register_gymnasium`` (``registration``) makes every envhub id a gymnasium id.
"""

from __future__ import annotations

from typing import Any

from envhub.env import Environment
from envhub.errors import InvalidArgumentError
from envhub.gymnasium_spaces import to_gymnasium_space
from envhub.interop.registration import register_gymnasium


def to_gymnasium(env: Environment[Any, Any, Any], seed: int = 0, render_mode: str | None = None) -> Any:
    """Expose an unbatched envhub env as a ``gymnasium.Env`` (no auto-reset: call ``reset`` at the end).

    At an episode end, ``step`` returns the observation reached (envhub's ``final_obs``). Outputs
    are writable NumPy arrays; it pickles when ``env`` does (made by ``envhub.make``).
    """
    if env.num_envs is not None:
        raise InvalidArgumentError(
            f"to_gymnasium needs an unbatched env; {env.id!r} has num_envs={env.num_envs}: use to_gymnasium_vector."
        )
    from envhub.interop.gym_env import EnvhubEnv

    return EnvhubEnv(env, seed, render_mode)


def to_gymnasium_vector(env: Environment[Any, Any, Any], seed: int = 0, autoreset_mode: Any = "NextStep") -> Any:
    """Expose a batched envhub env as a ``gymnasium.vector.VectorEnv``.

    ``autoreset_mode``: a ``gymnasium.vector.AutoresetMode`` (or its value): ``NEXT_STEP``
    (gymnasium's default), ``SAME_STEP`` (envhub's own: ``info["final_obs"]``) or ``DISABLED``
    (``reset(options={"reset_mask": mask})``); see ``envhub.interop.gym_vector``.
    """
    if env.num_envs is None:
        raise InvalidArgumentError(f"to_gymnasium_vector needs a batched env; make {env.id!r} with num_envs=N.")
    from envhub.interop.gym_vector import EnvhubVectorEnv

    return EnvhubVectorEnv(env, seed, autoreset_mode)


def from_gymnax(env: Any, params: Any = None) -> Environment[Any, Any, Any]:
    """Wrap your own gymnax environment *object* (and optional ``EnvParams``) as an envhub env."""
    return _wrap_object("gymnax", env, params=params)


def from_brax(env: Any, **kwargs: Any) -> Environment[Any, Any, Any]:
    """Wrap your own brax environment *object* as an envhub env (``episode_length``, ``reset_mode``,
    ``num_envs`` as for ``envhub.make("brax/...")``); no brax wrapper is stacked on it."""
    return _wrap_object("brax", env, **kwargs)


def _wrap_object(prefix: str, env: Any, **kwargs: Any) -> Environment[Any, Any, Any]:
    """The backend ``prefix``'s ``wrap_object(env, **kwargs)`` (``envhub.plugin.WrapObject``), found through the registry.

    The core imports no plugin; loading one checks that its ``wrap_object``, if any, is callable
    (``PluginIncompatibleError`` naming the plugin otherwise).
    """
    from envhub.api import default_registry
    from envhub.hookspecs import WRAP_ATTRIBUTE, WrapObject

    wrap: WrapObject | None = getattr(default_registry().plugin(prefix), WRAP_ATTRIBUTE, None)
    if wrap is None:
        raise InvalidArgumentError(f"backend {prefix!r} has no wrap_object(env, ...); it cannot wrap your own objects.")
    return wrap(env, **kwargs)


__all__ = [
    "from_brax",
    "from_gymnax",
    "register_gymnasium",
    "to_gymnasium",
    "to_gymnasium_space",
    "to_gymnasium_vector",
]
