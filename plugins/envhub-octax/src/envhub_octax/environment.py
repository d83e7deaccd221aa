"""``OctaxEnvironment``: an Octax CHIP-8 game behind the envhub API."""

from __future__ import annotations

import dataclasses
import importlib.metadata
from typing import Any, Literal

import jax
import numpy as np

import envhub
from envhub.plugin import InvalidArgumentError, JaxStep, draw_each, positive_int, spaces, take_time_limit
from envhub_octax.games import import_octax
from envhub_octax.quiet import quiet

import_octax()  # before anything imports octax (games.import_octax says why)
from octax.environments import create_environment  # noqa: E402
from octax.rendering import chip8_display_to_rgb, create_color_scheme  # noqa: E402

# octax's own time limit (OctaxEnv's max_num_steps_per_episodes), the default of max_episode_steps.
DEFAULT_LIMIT = 4500
# No episode reaches this many steps (octax's step counter is int32): octax's limit for max_episode_steps=None.
NO_LIMIT = np.iinfo(np.int32).max
# What create_environment sets from the game's module (OctaxEnv arguments make does not take), and envhub's own.
FIXED = (
    "rom_path",
    "score_fn",
    "terminated_fn",
    "action_set",
    "startup_instructions",
    "custom_startup",
    "disable_delay",
    "render_mode",
    "max_num_steps_per_episodes",
)
# octax 0.1.1's create_color_scheme names (it keeps them inside the function).
COLOR_SCHEMES = ("octax", "classic", "amber", "white", "blue", "retro")


class OctaxEnvironment(envhub.JaxEnvironment[Any, Any, Any]):
    """One Octax game on envhub's JAX base: octax's ``reset``/``step`` (octax has no auto-reset; the base
    resets in the same step). The observation is octax's: the last ``frame_skip`` CHIP-8 displays of the
    step, bool ``(frame_skip, 64, 32)`` (x before y; at a reset, zeros but the last). Actions are the game's
    keys, ``Discrete(len(action_set) + 1)``, the last one pressing none. The reward is the change of the
    game's score; ``terminated`` the game's end (``terminated_fn``); octax's time limit
    (``max_num_steps_per_episodes``, ``max_episode_steps`` here, default 4500) is ``truncated``.

    The key of a reset seeds the CHIP-8's random numbers (octax keeps it in ``state.rng``); octax's step
    draws from that state, so envhub's step key is unused. ``render`` draws the display with octax's
    ``chip8_display_to_rgb`` (``render_scale``, ``color_scheme``).
    """

    render_modes = ("rgb_array",)

    def __init__(
        self,
        name: str,
        *,
        num_envs: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        **kwargs: Any,
    ):
        limit = take_time_limit(kwargs, "max_num_steps_per_episodes", DEFAULT_LIMIT)
        where = f"(octax's max_num_steps_per_episodes) for octax/{name}"  # octax takes 0 or -1: every step truncates
        positive_int("max_episode_steps", limit, none="no limit", where=where)
        frequency, fps = kwargs.get("instruction_frequency", 700), kwargs.get("fps", 60)
        if frequency < fps:  # octax runs instruction_frequency // fps instructions a frame: none, the game stands still
            raise InvalidArgumentError(
                f"instruction_frequency={frequency!r} with fps={fps!r} for 'octax/{name}': the CHIP-8 runs "
                f"instruction_frequency // fps instructions a frame, here none; give instruction_frequency >= fps."
            )
        self.name, self.time_limit = name, limit
        with quiet():  # octax runs the game's startup instructions now
            self.octax_env, self.game_info = create_environment(
                name, max_num_steps_per_episodes=NO_LIMIT if limit is None else limit, **kwargs
            )
        self.colors = create_color_scheme(self.octax_env.color_scheme)  # octax's ValueError now, not at render
        _, obs, _ = jax.eval_shape(self.octax_env.reset, jax.random.key(0))
        super().__init__(  # no time limit of the base's: octax counts its own (state.time)
            observation_space=spaces.Box(False, True, obs.shape, np.bool_),
            action_space=spaces.Discrete(int(self.octax_env.num_actions), dtype=np.int32),
            num_envs=num_envs,
            reset_mode=reset_mode,
            reset_spares=reset_spares,
        )

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata,
            "time_limit": self.time_limit,
            "title": self.game_info.get("title", self.name),
            "keys": tuple(int(k) for k in self.octax_env.action_set),
            "library": f"octax {importlib.metadata.version('octax')}",
        }

    def _render(self, state: Any, index: int | None) -> Any:
        on, off = self.colors
        scale = int(self.octax_env.render_scale)
        draw = lambda one: chip8_display_to_rgb(one.display, scale=scale, on_color=on, off_color=off)  # noqa: E731
        return draw_each(draw, jax.device_get(state.env), self.num_envs, index)

    def _reset_one(self, key: jax.Array) -> tuple[Any, Any]:
        with quiet():
            state, obs, _ = self.octax_env.reset(key)
        return state, obs

    def _step_one(self, key: jax.Array, state: Any, action: Any) -> JaxStep:
        # octax's key is the one its reset stored in state.rng, not this one. Its info, {"score"}, is left out:
        # envhub's info at init is zeros, and some games start from another score (airplane: 251); it is
        # state.env.current_score.
        with quiet():
            state, obs, reward, terminated, truncated, _ = self.octax_env.step(state, action)
        return JaxStep(state=state, obs=obs, reward=reward, terminated=terminated, truncated=truncated, info={})


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("octax/<name>", ...)`` takes: OctaxEnv's arguments the game does not fix, and envhub's."""
    from octax.env import OctaxEnv

    table, _ = envhub.plugin.from_signature(OctaxEnv, skip=FIXED)
    for rate in ("instruction_frequency", "fps", "frame_skip"):  # below 1: octax divides by 0 or a shape goes negative
        if rate in table:
            table[rate] = dataclasses.replace(table[rate], bounds=(1, None))
    table["color_scheme"] = envhub.Kwarg(Literal[COLOR_SCHEMES], "classic", "render's colours (octax's schemes)")
    table["render_scale"] = envhub.Kwarg(int, 8, "render's pixels per CHIP-8 pixel", bounds=(1, None))
    limit = envhub.plugin.jax_kwargs(DEFAULT_LIMIT, native="max_num_steps_per_episodes")
    return {**table, **limit}
