"""envhub backend for JAXAtari: every game ``jaxtari.list_available_games()`` lists, pure JAX, on envhub's JAX base.

The games are object-centric Atari 2600 reimplementations: by default the observation is jaxtari's list of
objects (positions, sizes, ...), ``obs_type="pixels"`` gives the drawn frame. Every game loads jaxtari's sprite
pack when it is built, which jaxtari's ``install-sprites`` downloads once (README "Sprites").
jaxtari is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

import envhub
import envhub.plugin

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# How the conformance kit must drive the games (fields of envhub.testing.Options): the games rarely end within
# a few random steps, so the kit checks auto-reset and truncation through envhub's time limit. They are Atari
# games: most start and play the same for every reset key over the kit's rollouts (pong, amidar, ...), so the
# kit does not require different keys to give different trajectories (the same key must still give the same one).
# Games that hold still for their first steps (a start pause) show the same observation at a new episode's
# start as at the kit's time limit.
STILL_AT_START = "amidar beamrider kingkong mspacman othello pacman surround timepilot turmoil videocheckers".split()
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    "*": {"time_limit_kwarg": "max_episode_steps", "keys_matter": False},
    # (measured: no leaf of the observation changes in the first 10-12 random steps from a reset)
    **dict.fromkeys(STILL_AT_START, {"reset_obs_can_repeat": True}),
}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every game of ``jaxtari.list_available_games()`` (nothing is built, no sprite is read)."""
    from jaxtari.core import list_available_games

    for name in list_available_games():
        register(
            name,
            functools.partial(make_jaxatari_env, name),
            batching="native",
            description="JAXAtari (object-centric Atari games in JAX; needs jaxtari's sprite pack)",
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(accepted_kwargs, name),
        )


def make_jaxatari_env(name: str, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build JAXAtari game ``name``: ``num_envs``, ``max_episode_steps``, ``reset_mode``/``reset_spares`` go to
    envhub, ``obs_type`` picks the observation; ``mods`` and ``allow_conflicts`` go to ``jaxtari.make``."""
    from envhub_jaxatari.environment import JaxAtariEnvironment

    return JaxAtariEnvironment(name, **kwargs)


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("jaxatari/<name>", ...)`` takes: ``jaxtari.make``'s arguments that act, ``obs_type`` and envhub's."""
    from envhub_jaxatari.environment import GAME_TIME_LIMITS

    limit = GAME_TIME_LIMITS.get(name, (None, None))[1]
    return {
        # jaxtari.make's mode and difficulty are accepted by jaxtari 0.2.0 but reach no game, so envhub refuses them.
        "mods": envhub.Kwarg(
            list | None, None, "jaxtari's modifications of the game, by name (jaxtari.core.MOD_MODULES)"
        ),
        "allow_conflicts": envhub.Kwarg(bool, False, "let jaxtari apply mods that conflict"),
        "obs_type": envhub.Kwarg(
            Literal["objects", "pixels"], "objects", "'pixels': the drawn frame, uint8 (210, 160, 3)"
        ),
        **envhub.plugin.jax_kwargs(limit),
    }
