"""``FactoriaxEnvironment``: a factoriax scenario behind the envhub API."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import inspect
from typing import Any, Literal

import jax
import numpy as np
from factoriax.engine.constants import BLOCK_MAX_RESOURCES
from factoriax.engine.envs.registry import SCENARIOS
from factoriax.engine.observations import OBSERVATIONS
from factoriax.engine.renderer import DEFAULT_TILE_PX, JaxRenderer
from factoriax.engine.step import is_game_over

import envhub
from envhub.plugin import Bounds, JaxStep, draw_each, positive_int, spaces, take_time_limit

#: factoriax's own name for the time limit (an ``EnvParams`` field), accepted as an alias of ``max_episode_steps``.
NATIVE_LIMIT = "max_timesteps"
#: ``max_timesteps`` for ``max_episode_steps=None``: a clock that never runs out (int32, as ``state.timestep``).
NO_LIMIT = int(np.iinfo(np.int32).max)

_UNSET: Any = object()

# The EnvParams fields a scenario's engine reads, taken as make kwargs. The six terrain probabilities are left
# out: factoriax reads them only for its own generated worlds, which no scenario uses.
PARAM_KWARGS = ("base_resources", "miner_mining_rate", "player_mining_yield", "recipe_table")
# Scenarios on a fixed level, whose ore comes with the level: base_resources changes nothing there.
FIXED_LEVELS = frozenset({"Rocket-v1"})

# factoriax.make's arguments that envhub replaces, with what to use instead.
REFUSED = {
    "auto_reset": "envhub resets in the same step itself (factoriax's AutoResetWrapper is never used); "
    "leave auto_reset out",
    "resample": "envhub's reset_mode='cached' is factoriax's resample=False (every episode restarts from the "
    "first world); the default, reset_mode='real', is resample=True",
}


class FactoriaxEnvironment(envhub.JaxEnvironment[Any, Any, Any]):
    """One factoriax scenario on envhub's JAX base: its ``reset_env``/``step_env`` (``factoriax.make(...,
    auto_reset=False)``; the base resets in the same step). The observation is factoriax's flat float32
    vector in [0, 1] (the variant ``obs`` names), the action one of factoriax's 87 ``Action`` values.
    factoriax's ``done`` mixes the scenario's own end (``terminated``: MinerBootstrap's six producing miners)
    with its step budget, ``params.max_timesteps`` (``truncated``); ``max_episode_steps`` sets that budget,
    so the observation's clock (``timestep / max_timesteps``) runs to the same limit.
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
        limit = take_time_limit(kwargs, NATIVE_LIMIT, _UNSET)
        fields = param_fields(name)
        self.name = name
        build = SCENARIOS[name].build
        self.obs_variant = kwargs.get("obs", inspect.signature(build).parameters["obs"].default)
        self.factoriax_env, params = build(**{k: v for k, v in kwargs.items() if k not in fields})
        self.max_timesteps = (
            params.max_timesteps if limit is _UNSET else positive_int("max_episode_steps", limit, none="no limit")
        )
        self.params = params.replace(
            **{k: v for k, v in kwargs.items() if k in fields},
            max_timesteps=NO_LIMIT if self.max_timesteps is None else self.max_timesteps,
        )
        obs = jax.eval_shape(lambda k: self.factoriax_env.reset_env(k, self.params)[0], jax.random.key(0))
        # factoriax scales every channel into [0, 1]; a tile's ore only while it is at most BLOCK_MAX_RESOURCES.
        high = 1.0 if self.params.base_resources <= BLOCK_MAX_RESOURCES else np.inf
        super().__init__(  # no time limit of the base's: factoriax keeps its own clock (params.max_timesteps)
            observation_space=spaces.Box(0.0, high, obs.shape, obs.dtype),
            action_space=spaces.Discrete(int(self.factoriax_env.action_space(self.params).n), dtype=np.int32),
            num_envs=num_envs,
            reset_mode=reset_mode,
            reset_spares=reset_spares,
        )

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata,
            "time_limit": self.max_timesteps,
            "observation": self.obs_variant,
            "library": f"factoriax {importlib.metadata.version('factoriax')} ({self.name})",
        }

    def _render(self, state: Any, index: int | None) -> Any:
        # One renderer per env (its atlases, and its jit compiled once); set in __dict__, not through
        # JaxEnvironment.__setattr__, which would drop the env's compiled programs.
        renderer = self.__dict__.setdefault("_renderer", JaxRenderer(tile_px=DEFAULT_TILE_PX))
        return draw_each(
            lambda one: np.asarray(renderer.jit_render_map(one)), jax.device_get(state.env), self.num_envs, index
        )

    @property
    def default_params(self) -> Any:
        """factoriax's ``EnvParams`` of the scenario (with ``make``'s kwargs applied), as data."""
        return self.params

    @property
    def params_bounds(self) -> Bounds:
        """Rates and resources are not negative; ore stays within the observation's [0, 1] when make's did."""
        most = BLOCK_MAX_RESOURCES if self.single_observation_space.high.max() <= 1.0 else None
        return Bounds(
            base_resources=(0, most),
            miner_mining_rate=(0, None),
            player_mining_yield=(0, None),
            max_timesteps=(1, None),
        )

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        obs, state = self.factoriax_env.reset_env(key, params)
        return state, obs

    def _step_one(self, key: jax.Array, state: Any, action: Any, params: Any) -> JaxStep:
        # The key goes to factoriax's step hooks (its engine draws nothing), as factoriax's own step passes it.
        obs, state, reward, _, info = self.factoriax_env.step_env(key, state, action, params)
        # The scenario's own end alone: is_terminal ORs it with a clock that never runs out here.
        without_clock = params.replace(max_timesteps=NO_LIMIT)
        return JaxStep(
            state=state,
            obs=obs,
            reward=reward,
            terminated=self.factoriax_env.is_terminal(state, without_clock),
            truncated=is_game_over(state, params),
            info=info,
        )


def declared_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("factoriax/<name>", ...)`` takes: the scenario builder's arguments, the ``EnvParams`` fields
    (defaults: the scenario's), the time limit (alias ``max_timesteps``) and envhub's reset arguments."""
    build = SCENARIOS[name].build
    table, _ = envhub.plugin.from_signature(build)
    if "obs" in table:
        table["obs"] = dataclasses.replace(table["obs"], type=Literal[tuple(OBSERVATIONS)], doc="observation variant")
    _, params = build()
    values = {f: getattr(params, f) for f in param_fields(name)}
    return {
        **table,
        **{k: envhub.Kwarg(envhub.plugin.infer_type(v), v, "factoriax EnvParams field") for k, v in values.items()},
        **envhub.plugin.jax_kwargs(params.max_timesteps, native=NATIVE_LIMIT),
        **{k: envhub.Kwarg(refused=why) for k, why in REFUSED.items()},
    }


def param_fields(name: str) -> tuple[str, ...]:
    """The ``EnvParams`` fields a kwarg may set in scenario ``name``: those its engine reads (the time limit has
    its own kwarg)."""
    return tuple(f for f in PARAM_KWARGS if not (f == "base_resources" and name in FIXED_LEVELS))
