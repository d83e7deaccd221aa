"""envhub backend for the Arcade Learning Environment: every ROM ale-py bundles, as ``ale/<Game>-v5``, stepped
through ALE's own vector env and its XLA FFI calls (``ale_py.vector_env.AtariVectorEnv.xla()``) inside jit.

ale-py is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any

import envhub
import envhub.plugin

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1
TIME_LIMIT = envhub.plugin.TIME_LIMIT_KWARG

# How the conformance kit drives the games (fields of envhub.testing.Options): Atari is slow on CPU, so short
# episodes and few steps; inside jit envhub-ale refuses bad actions without a callback (envhub.checked raises them),
# and its programs are pure XLA (the kit's pure check applies).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    "*": {"time_limit_kwarg": "max_episode_steps", "time_limit": 5, "num_steps": 20, "jit_refusal": "checked"}
}

# AtariVectorEnv arguments envhub sets: why, and what to pass instead.
RESERVED = {
    "batch_size": "envhub steps every emulator each step: leave it out",
    "autoreset_mode": "envhub resets an ended game in the same step (ts.final_obs is its last frame): leave it out",
    "continuous": "envhub-ale serves the discrete action sets: leave it out",
    "continuous_action_threshold": "envhub-ale serves the discrete action sets: leave it out",
}


# Bundled ROMs with no single-player mode (gymnasium registers no ALE/<Game>-v5 for them): ALE 0.12.1 ends the
# process when its vector env loads one ("Attempt to wrap ROM ... failed"), so they are listed unavailable.
MULTIPLAYER_ONLY = frozenset({"combat", "joust", "maze_craze", "warlords"})


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register ``<Game>-v5`` for every ROM ale-py bundles (nothing is built)."""
    from ale_py import roms
    from ale_py.registration import rom_id_to_name

    for rom in roms.get_all_rom_ids():
        if rom in MULTIPLAYER_ONLY:
            why = "a multi-player-only ROM: ALE has no single-player mode of it (and would end the process loading it)"
            register(f"{rom_id_to_name(rom)}-v5", None, unavailable=why)
            continue
        register(
            f"{rom_id_to_name(rom)}-v5",
            functools.partial(make_ale_env, rom),
            batching="native",
            description="ALE (ale-py's vector env through its XLA calls, same-step auto-reset)",
            check_options=envhub.check_options_for(CHECK_OPTIONS, rom),
            kwargs=accepted_kwargs,
        )


def make_ale_env(game: str, num_envs: int | None = None, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build ``num_envs`` (or one) emulators of ROM ``game`` with gymnasium's v5 settings (``V5``); every
    AtariVectorEnv argument but ``RESERVED`` overrides them. The time limit is ``max_episode_steps`` steps, or
    ``max_num_frames_per_episode // frameskip`` (v5's 108000 frames: 27000 steps)."""
    from ale_py.registration import rom_id_to_name

    from envhub_ale.environment import AleEnvironment

    env_id = f"ale/{rom_id_to_name(game)}-v5"
    steps, frames = kwargs.pop(TIME_LIMIT, None), kwargs.pop("max_num_frames_per_episode", None)
    if steps is not None and frames is not None:
        raise envhub.plugin.InvalidArgumentError(
            f"{env_id}: {TIME_LIMIT}={steps} and max_num_frames_per_episode={frames} both set the time limit: "
            "pass one of them"
        )
    check_ranges(env_id, kwargs)
    if steps is None:
        steps = envhub.plugin.positive_int("max_num_frames_per_episode", 108_000 if frames is None else frames)
        steps //= kwargs.get("frameskip", 4)
    limit = envhub.plugin.positive_int(TIME_LIMIT, steps)
    return AleEnvironment(game, num_envs, max_episode_steps=limit, **kwargs)


# AtariVectorEnv arguments with a range ALE does not check itself (measured with ale-py 0.12.1: img_height=0 hangs,
# stack_num=0 ends the process, a repeat_action_probability of -0.5 or 1.5 or a negative noop_max is played as is).
POSITIVE = ("frameskip", "img_height", "img_width", "stack_num")  # >= 1
AT_LEAST = {"noop_max": (0, "no noops"), "num_threads": (0, "ALE picks"), "thread_affinity_offset": (-1, "no pinning")}


def check_ranges(env_id: str, kwargs: dict[str, Any]) -> None:
    """Refuse AtariVectorEnv arguments outside their range (the type is checked already, by ``accepted_kwargs``).

    Raises:
        InvalidArgumentError: naming the argument, its value and its range.
    """
    for name in POSITIVE:
        if name in kwargs:
            envhub.plugin.positive_int(name, kwargs[name], where=f"for {env_id}")
    for name, (low, meaning) in AT_LEAST.items():
        value = kwargs.get(name, low)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise envhub.plugin.InvalidArgumentError(
                f"{name}={value!r} for {env_id}: use an int >= {low} ({low}: {meaning})."
            )
    p = kwargs.get("repeat_action_probability", 0.25)
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not (math.isfinite(p) and 0 <= p <= 1):
        raise envhub.plugin.InvalidArgumentError(
            f"repeat_action_probability={p!r} for {env_id}: use a float in [0, 1] (the chance that ALE repeats the "
            "previous action instead of the new one: sticky actions; v5's is 0.25, DQN's 0.0)."
        )


def accepted_kwargs() -> dict[str, envhub.Kwarg]:
    """What ``make("ale/<Game>-v5", ...)``: AtariVectorEnv's arguments with the v5 defaults, and envhub's time limit."""
    from ale_py.vector_env import AtariVectorEnv

    from envhub_ale.environment import V5

    table, _ = envhub.plugin.from_signature(AtariVectorEnv, skip=("game", "num_envs", *RESERVED))
    table["max_num_frames_per_episode"] = envhub.Kwarg(int, 108_000, "the time limit in frames (steps x frameskip)")
    for name, value in V5.items():
        table[name] = envhub.Kwarg(table[name].type, value, "ALE (gymnasium's v5 value)")
    return {
        **table,
        TIME_LIMIT: envhub.Kwarg(int | None, None, "steps after which an episode is truncated (default: 27000)"),
        **{k: envhub.Kwarg(refused=why) for k, why in RESERVED.items()},
    }
