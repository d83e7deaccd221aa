"""``CraftaxEnvironment``: a Craftax environment behind the envhub API."""

from __future__ import annotations

import dataclasses
import importlib.metadata
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
from craftax.craftax_env import make_craftax_env_from_name

import envhub
from envhub.plugin import Bounds, JaxStep, positive_int, spaces, take_time_limit, truncated_unless_terminated
from envhub_craftax.textures import use_user_texture_cache

# No episode reaches this many steps: ``is_terminal`` with it leaves out craftax's time limit.
_NO_LIMIT = np.iinfo(np.int32).max
# Worlds generated together on CPU: the fastest of 8/16/32/64 for 64 and 1024 envs (lax.map batches).
CPU_RESET_CHUNK = 16
# EnvParams fields that count steps (a day and an episode last at least one), or cap an attribute at >= 1.
_AT_LEAST_ONE = ("max_timesteps", "day_length", "max_attribute")


class CraftaxEnvironment(envhub.JaxEnvironment[Any, Any, Any]):
    """One Craftax environment on envhub's JAX base: craftax's ``reset_env``/``step_env`` without its
    auto-reset (the base resets in the same step, splitting the key as craftax's own ``step`` does).

    craftax ends an episode (``done``) at its time limit ``params.max_timesteps`` too; the plugin asks
    ``is_terminal`` again without that limit, so a death or a beaten boss is ``terminated`` and the time
    limit alone is ``truncated``.

    ``reset_chunk`` (default ``"auto"``: 16 on CPU, else all at once): batched resets generate at most
    this many worlds at a time. On CPU craftax's vmapped world generation grows faster than the batch
    (0.27 s for 64 envs, 112 s for 1024; 1.2 s for 1024 in chunks of 16).
    """

    def __init__(
        self,
        name: str,
        params: Any = None,
        *,
        num_envs: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        reset_chunk: int | None | Literal["auto"] = "auto",
        **kwargs: Any,
    ):
        limit = take_time_limit(kwargs, "max_timesteps", None)
        if limit is not None:  # craftax takes 0 or -1 and truncates every step
            where = f"(craftax's max_timesteps) for craftax/{name}"
            kwargs["max_timesteps"] = positive_int("max_episode_steps", limit, where=where)
        if "Pixels" in name:
            use_user_texture_cache(name)  # before the renderer's first trace (textures.py says why)
        craftax_env = make_craftax_env_from_name(name, auto_reset=False)
        if "static_env_params" in kwargs:
            craftax_env = type(craftax_env)(static_env_params=kwargs.pop("static_env_params"))
        base = params if params is not None else craftax_env.default_params
        fields = {f.name for f in dataclasses.fields(base)}
        unknown = sorted(set(kwargs) - fields)
        if unknown:
            raise envhub.errors.InvalidArgumentError(
                f"{unknown!r} are no craftax EnvParams fields of {name}; use some of {sorted(fields)} or static_env_params."
            )
        self.craftax_env, self.name = craftax_env, name
        self.params = base.replace(**{k: type(getattr(base, k))(v) for k, v in kwargs.items()})
        super().__init__(  # no time limit of the base's: craftax keeps its own (params.max_timesteps)
            observation_space=to_envhub_space(craftax_env.observation_space(self.params)),
            action_space=to_envhub_space(craftax_env.action_space(self.params)),
            num_envs=num_envs,
            reset_mode=reset_mode,
            reset_spares=reset_spares,
            reset_chunk=(CPU_RESET_CHUNK if jax.default_backend() == "cpu" else None)
            if reset_chunk == "auto"
            else reset_chunk,
        )

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata,
            "time_limit": int(self.params.max_timesteps),
            "library": f"craftax {importlib.metadata.version('craftax')}",
        }

    @property
    def default_params(self) -> Any:
        """craftax's own ``EnvParams`` (with ``make``'s kwargs applied): mob health, spawn chances, day length..."""
        return self.params

    @property
    def params_bounds(self) -> Bounds:
        """Chances lie in [0, 1]; healths, the day, the episode and the attribute cap are at least 1; a distance >= 0."""
        names = [f.name for f in dataclasses.fields(self.params)]
        chances = {n: (0.0, 1.0) for n in names if n.endswith("_chance")}
        at_least_one = {n: (1, None) for n in names if n.endswith("_health") or n in _AT_LEAST_ONE}
        distances = {n: (0, None) for n in names if n.endswith("_distance")}
        return Bounds({**chances, **at_least_one, **distances})

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        obs, state = self.craftax_env.reset_env(key, params)
        return state, obs

    def _step_one(self, key: jax.Array, state: Any, action: Any, params: Any) -> JaxStep:
        obs, state, reward, done, info = self.craftax_env.step_env(key, state, action, params)
        terminated = self.craftax_env.is_terminal(state, params.replace(max_timesteps=_NO_LIMIT))
        # craftax's discount is 0 at its time limit too; envhub's is 0 on a termination only.
        info = {**info, "discount": jnp.where(terminated, 0.0, 1.0).astype(jnp.float32)}
        truncated = truncated_unless_terminated(terminated, done)
        return JaxStep(state=state, obs=obs, reward=reward, terminated=terminated, truncated=truncated, info=info)


def to_envhub_space(space: Any) -> spaces.Space:
    """Convert a craftax space (gymnax-style ``Discrete`` or ``Box``) to an envhub space."""
    from craftax.environment_base import spaces as craftax_spaces

    if isinstance(space, craftax_spaces.Discrete):
        return spaces.Discrete(space.n, dtype=space.dtype)
    if isinstance(space, craftax_spaces.Box):
        return spaces.Box(np.asarray(space.low), np.asarray(space.high), tuple(space.shape), np.dtype(space.dtype))
    raise TypeError(f"envhub-craftax cannot convert craftax space {space!r} of type {type(space).__name__}.")
