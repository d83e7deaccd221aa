"""envhub backend for gymnax: every gymnax environment, batched on envhub's JAX base, jit/scan/vmap friendly.

gymnax is imported lazily, inside the factories, and only the modules an environment needs (``importing``), so
``envhub list``, ``envhub info`` and an unknown id's error stay fast.
"""

from __future__ import annotations

import functools
from typing import Any

import envhub

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# Environments whose constructor cannot run offline, with the reason `make` reports.
UNAVAILABLE = {
    "MNISTBandit-bsuite": "its constructor downloads the MNIST data set from the internet, which envhub does not do",
}

# How the conformance kit must drive some environments (fields of envhub.testing.Options).
# gymnax's DiscountingChain, Pong and SpaceInvaders use no randomness at all, and DeepSea only
# with sample_action_map=True (its default is the constructor's fixed map): keys cannot matter.
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    "*": {"time_limit_kwarg": "max_episode_steps"},
    # The observation is also a normalised clock, t / max_steps_in_episode.
    "DiscountingChain-bsuite": {"obs_depend_on_time_limit": True, "keys_matter": False},
    "DeepSea-bsuite": {"keys_matter": False},
    "Pong-misc": {"keys_matter": False},
    "SpaceInvaders-MinAtar": {"keys_matter": False},
    # The observation never changes, so a reset cannot be seen in it.
    # Every episode is one step and its one float param (optimal_return) feeds only the state's regret count:
    # no rollout shows its params, so the params check cannot apply.
    "SimpleBandit-bsuite": {"reset_obs_can_repeat": True, "params": False},
    # Float params that the kit's short random rollout does not reach (the goal's reward, regret bookkeeping):
    # the params check varies what shows at once instead.
    "MetaMaze-misc": {"params_variant": {"punishment": -1.0}},
}
CHECK_OPTIONS["DiscountingChain-bsuite"]["params_variant"] = {"max_steps_in_episode": 10}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every id in gymnax's registry."""
    import importlib.util

    from envhub_gymnax.importing import registered_envs

    if importlib.util.find_spec("gymnax") is None:  # the ids are ours until gymnax is imported: is it there?
        raise ModuleNotFoundError("No module named 'gymnax'", name="gymnax")
    for name in registered_envs():
        if name in UNAVAILABLE:
            register(name, None, unavailable=UNAVAILABLE[name])
            continue
        register(
            name,
            functools.partial(make_gymnax_env, name),
            description="gymnax (JAX-native)",
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(accepted_kwargs, name),
            batching="native",
        )


def make_gymnax_env(name: str, params: Any = None, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build gymnax ``name``: ``params`` replaces its ``EnvParams``; kwargs naming ``EnvParams``
    fields update them (``max_episode_steps`` sets ``max_steps_in_episode``, gymnax's name, also
    accepted); the other kwargs go to its constructor."""
    from envhub_gymnax.environment import GymnaxEnvironment

    return GymnaxEnvironment(name, params=params, **kwargs)


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("gymnax/<name>", ...)`` accepts (called by make, after gymnax is imported)."""
    from envhub_gymnax.environment import declared_kwargs

    return declared_kwargs(name)


def wrap_object(env: Any, params: Any = None) -> envhub.Environment[Any, Any, Any]:
    """A user's own gymnax environment object (and optional ``EnvParams``) as an envhub env (``envhub.interop.from_gymnax``)."""
    from envhub_gymnax.environment import GymnaxEnvironment

    return GymnaxEnvironment.from_env(env, params)
