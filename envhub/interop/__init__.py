"""Interop: envhub environments as gymnasium, PettingZoo, gymnax and JaxMARL environments, and users' own env objects as envhub ones.

gymnasium, gymnax, jaxmarl, torch and brax are imported inside the functions that need them, never by ``import
envhub``. The exports (``gym_env``, ``gym_vector``) compile one call per step (``compiled``);
``register_gymnasium`` (``registration``) makes every envhub id a gymnasium id; ``to_gymnax``
(``gymnax_export``) hands an env to gymnax code (rejax, PureJaxRL), ``to_jaxmarl`` (``jaxmarl_export``) a
multi-agent env to JaxMARL code (its IPPO, MAPPO and QMIX baselines), ``to_torchrl`` (``torchrl_export``)
a single-agent env to TorchRL (its collectors, transforms and losses; torch is imported only there).
"""

from __future__ import annotations

from typing import Any

from envhub.core.env import Environment
from envhub.errors import InvalidArgumentError
from envhub.host.gymnasium_spaces import to_gymnasium_space
from envhub.interop.exports import to_gymnasium, to_gymnasium_vector, to_pettingzoo_aec, to_pettingzoo_parallel
from envhub.interop.registration import register_gymnasium


def from_gymnax(env: Any, params: Any = None) -> Environment[Any, Any, Any]:
    """Wrap your own gymnax environment *object* (and optional ``EnvParams``) as an envhub env."""
    return _wrap_object("gymnax", env, params=params)


def from_brax(env: Any, **kwargs: Any) -> Environment[Any, Any, Any]:
    """Wrap your own brax environment *object* as an envhub env (``episode_length``, ``reset_mode``,
    ``num_envs`` as for ``envhub.make("brax/...")``); no brax wrapper is stacked on it."""
    return _wrap_object("brax", env, **kwargs)


def to_gymnax(env: Environment[Any, Any, Any], step_returns: int = 6) -> tuple[Any, Any]:
    """Expose an unbatched single-agent JAX-native envhub env as a gymnax ``Environment``: ``(gymnax_env, params)``.

    ``step_returns=6``: gymnax 1.0's ``(obs, state, reward, terminated, truncated, info)``; ``5``: the classic
    ``(obs, state, reward, done, info)`` of rejax 0.1.3 and PureJaxRL (``envhub.interop.gymnax_export``).
    """
    from envhub.interop.gymnax_export import to_gymnax as export

    return export(env, step_returns)


def to_jaxmarl(env: Environment[Any, Any, Any], keep_final_obs: bool = True) -> Any:
    """Expose an unbatched multi-agent JAX-native envhub env as a JaxMARL ``MultiAgentEnv`` (``envhub.interop.jaxmarl_export``).

    ``infos`` holds ``terminated``, ``truncated`` and (unless ``keep_final_obs=False``, for baselines that reshape every
    info leaf to one value per agent) ``final_observation``; ``dones["__all__"]`` folds time limits in, as JaxMARL does.
    """
    from envhub.interop.jaxmarl_export import to_jaxmarl as export

    return export(env, keep_final_obs)


def to_torchrl(
    env: Environment[Any, Any, Any], device: Any = None, one_hot_actions: bool = False, seed: int = 0
) -> Any:
    """Expose a single-agent envhub env (batched or not, JAX-native or host) as a TorchRL ``EnvBase`` (``envhub.interop.torchrl_export``).

    ``batch_size=[num_envs]``; ``("next", ...)`` holds the observation reached, a masked ``reset`` the next episode's
    first (envhub's same-step auto-reset); ``device``: the tensors' torch device (default: the JAX device's).
    """
    from envhub.interop.torchrl_export import to_torchrl as export

    return export(env, device, one_hot_actions, seed)


def _wrap_object(prefix: str, env: Any, **kwargs: Any) -> Environment[Any, Any, Any]:
    """The backend ``prefix``'s ``wrap_object(env, **kwargs)`` (``envhub.plugin.WrapObject``), found through the registry.

    The core imports no plugin; loading one checks that its ``wrap_object``, if any, is callable
    (``PluginIncompatibleError`` naming the plugin otherwise).
    """
    from envhub.registry.api import default_registry
    from envhub.registry.hookspecs import WRAP_ATTRIBUTE, WrapObject

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
    "to_gymnax",
    "to_jaxmarl",
    "to_pettingzoo_aec",
    "to_pettingzoo_parallel",
    "to_torchrl",
]
