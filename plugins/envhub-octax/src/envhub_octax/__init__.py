"""envhub backend for Octax: every CHIP-8 arcade game of ``octax.environments``, emulated in pure JAX.

octax is imported lazily, inside the hook and the factories, so ``envhub`` and ``envhub list`` stay fast.
"""

from __future__ import annotations

import functools
from typing import Any

import envhub
import envhub.plugin

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# How the conformance kit must drive the games (fields of envhub.testing.Options): octax's time limit is
# max_episode_steps. The key only seeds the CHIP-8's random numbers (state.rng): games that draw none in the
# kit's 64 random steps (measured, 8 games x 400 steps; flight_runner draws from step 32 of some) give every key the
# same trajectory there.
_SAME_FOR_EVERY_KEY = ("airplane", "flight_runner", "missile", "squash", "tetris", "vertical_brix")
_SAME_FOR_EVERY_KEY += ("cavern1", "cavern2", "cavern3", "cavern5", "cavern6")
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    "*": {"time_limit_kwarg": "max_episode_steps"},
    **{name: {"keys_matter": False} for name in _SAME_FOR_EVERY_KEY},
}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every game octax's ``create_environment`` builds (nothing is built), and the level ROMs it cannot."""
    from envhub_octax.games import game_names, unlisted_levels

    for name in game_names():
        register(
            name,
            functools.partial(make_octax_env, name),
            batching="native",
            description="Octax (CHIP-8 arcade games, JAX-native)",
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(accepted_kwargs, name),
        )
    for name, reason in unlisted_levels().items():
        register(name, None, unavailable=reason)


def make_octax_env(name: str, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build Octax game ``name``: ``num_envs``, ``reset_mode``, ``reset_spares`` go to envhub; ``max_episode_steps``
    (octax's ``max_num_steps_per_episodes``, also accepted) and the others to octax's ``OctaxEnv``
    (``frame_skip``, ``instruction_frequency``, ``fps``, ``render_scale``, ``color_scheme``)."""
    from envhub_octax.environment import OctaxEnvironment

    return OctaxEnvironment(name, **kwargs)


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("octax/<name>", ...)`` takes (``envhub_octax.environment.accepted_kwargs``)."""
    from envhub_octax.environment import accepted_kwargs as table

    return table(name)
