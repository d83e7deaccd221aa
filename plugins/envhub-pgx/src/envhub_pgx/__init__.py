"""envhub backend for Pgx: every game ``pgx.available_envs()`` lists, pure JAX, on envhub's JAX base.

Two-player (and three-player) games are turn-based multi-agent environments (docs/multi-agent.md):
``env.agents`` names the players, the reward is a dict per player, and the observation carries the
player to move and the legal-action mask. One-player games (2048, MinAtar) are single-agent.
pgx is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import envhub
import envhub.plugin

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# How the conformance kit must drive the games (fields of envhub.testing.Options): pgx has no time limit of
# its own, so the kit checks truncation through envhub's.
CHECK_OPTIONS: dict[str, dict[str, Any]] = {"*": {"time_limit_kwarg": "max_episode_steps"}}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every id of ``pgx.available_envs()`` (nothing is built)."""
    import pgx

    for name in pgx.available_envs():
        register(
            name,
            functools.partial(make_pgx_env, name),
            batching="native",
            description="Pgx (JAX-native games)",
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(accepted_kwargs, name),
        )


def make_pgx_env(name: str, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build Pgx game ``name``: ``num_envs``, ``max_episode_steps``, ``reset_mode``/``reset_spares`` go to
    envhub; the others to the game's constructor (e.g. MinAtar's ``sticky_action_prob``, Go's ``komi``)."""
    from envhub_pgx.environment import PgxEnvironment

    return PgxEnvironment(name, **kwargs)


# Ranges pgx does not check (Go's history_length or max_terminal_steps below 1 end in an IndexError or a
# negative shape inside pgx; MinAtar's sticky_action_prob is a probability).
BOUNDS: dict[str, envhub.plugin.Range] = {
    "history_length": (1, None),
    "max_terminal_steps": (1, None),
    "sticky_action_prob": (0.0, 1.0),
}


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("pgx/<name>", ...)`` takes: the game class's constructor arguments (but what the id fixes) and envhub's."""
    from envhub_pgx.environment import PRESET, game_class

    table, _ = envhub.plugin.from_signature(game_class(name), skip=tuple(PRESET.get(name, {})))
    for kwarg in set(BOUNDS) & set(table):
        table[kwarg] = dataclasses.replace(table[kwarg], bounds=BOUNDS[kwarg])
    return {**table, **envhub.plugin.jax_kwargs(None)}
