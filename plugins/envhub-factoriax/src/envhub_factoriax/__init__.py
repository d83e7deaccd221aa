"""envhub backend for Factoriax: every scenario ``factoriax.make`` offers, pure JAX, on envhub's JAX base.

Factoriax is one engine (``FactoriaxEnv``) that scenarios shape into tasks: a world, a recipe book, an
achievement reward, an end condition and a step budget. Each scenario with a factoriax id is an envhub id;
its builder's arguments (the observation variant, its radius, MinerBootstrap's start state) and the
``EnvParams`` fields are ``make`` kwargs. The ids are listed here, not read from factoriax: importing it
(gymnax, flax) takes seconds, and ``envhub list`` imports no backend; a test keeps the list equal to factoriax's.
"""

from __future__ import annotations

import functools
from typing import Any

import envhub
import envhub.plugin

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# factoriax 0.1.0's scenarios (factoriax.engine.envs.registry.list_scenarios), with a one-line description.
SCENARIOS: dict[str, str] = {
    "MinerBootstrap-v1": "Factoriax: mine, craft and place six producing miners (16x16, sparse reward, 300 steps)",
    "EasyRocket-v1": "Factoriax: build a rocket from raw ore on a new 16x16 world per episode (2000 steps)",
    "Rocket-v1": "Factoriax: build a rocket on a fixed 32x32 map, hand crafts blocked (8000 steps)",
}

# How the conformance kit must drive the scenarios (fields of envhub.testing.Options). The observation
# holds a normalised clock, timestep / max_timesteps, so two time limits give two observations. Rocket-v1's
# world is a fixed level and no factoriax step draws from its key: keys cannot matter.
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    # The params check: the terrain probabilities (its float params) shape no scenario's world; the clock does.
    "*": {
        "time_limit_kwarg": "max_episode_steps",
        "obs_depend_on_time_limit": True,
        "params_variant": {"max_timesteps": 10},
    },
    "Rocket-v1": {"keys_matter": False},
}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every factoriax scenario id (nothing is built, factoriax is not imported)."""
    for name, description in SCENARIOS.items():
        register(
            name,
            functools.partial(make_factoriax_env, name),
            batching="native",
            description=description,
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(accepted_kwargs, name),
        )


def make_factoriax_env(name: str, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build factoriax scenario ``name``: ``num_envs``, ``max_episode_steps`` (alias ``max_timesteps``),
    ``reset_mode``/``reset_spares`` go to envhub; ``EnvParams`` fields update the scenario's params; the
    others go to the scenario's builder (``obs``, ``obs_radius``, MinerBootstrap's ``start``)."""
    from envhub_factoriax.environment import FactoriaxEnvironment

    return FactoriaxEnvironment(name, **kwargs)


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("factoriax/<name>", ...)`` takes (called by make, so it may import factoriax)."""
    from envhub_factoriax.environment import declared_kwargs

    return declared_kwargs(name)
