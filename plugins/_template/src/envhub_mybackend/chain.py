"""Chain: a slippery walk to the right end of a line of cells, pure JAX, on envhub's JAX base."""

from __future__ import annotations

from importlib import metadata
from typing import Any

import jax
import jax.numpy as jnp

from envhub.plugin import JaxEnvironment, JaxStep, spaces


class Chain(JaxEnvironment[jax.Array, jax.Array, jax.Array]):
    """Move left (0) or right (1); with probability ``slip`` the move goes the other way.

    Reaching the right end terminates with reward 1. ``JaxEnvironment`` does the rest: the
    time limit (``max_episode_steps``, truncation), the same-step auto-reset with ``final_obs``, the
    batch (``num_envs``), and compiling eager calls.
    """

    def __init__(
        self,
        length: int = 8,
        slip: float = 0.1,
        *,
        num_envs: int | None = None,
        max_episode_steps: int = 50,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
    ):
        super().__init__(
            observation_space=spaces.Box(0.0, 1.0, (length,)),  # the spaces of one environment
            action_space=spaces.Discrete(2),
            num_envs=num_envs,
            max_episode_steps=max_episode_steps,
            reset_mode=reset_mode,  # "cached": every episode restarts from the first state
            reset_spares=reset_spares,
        )
        self.length, self.slip = length, slip

    @property
    def metadata(self) -> dict[str, Any]:
        """What `envhub info` shows beyond the spaces: the base's (time limit, resets) and ``library``."""
        # The library the environments come from, with its version: here this package itself; a plugin
        # wrapping a backend names that, e.g. f"mylib {metadata.version('mylib')}".
        return {**super().metadata, "library": f"envhub-mybackend {metadata.version('envhub-mybackend')}"}

    def _observe(self, pos: jax.Array) -> jax.Array:
        return jax.nn.one_hot(pos, self.length, dtype=jnp.float32)

    def _reset_one(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        pos = jax.random.randint(key, (), 0, self.length // 2)  # the state is the position
        return pos, self._observe(pos)

    def _step_one(self, key: jax.Array, pos: jax.Array, action: jax.Array) -> JaxStep:
        slipped = jax.random.uniform(key) < self.slip
        move = jnp.where(slipped, 1 - 2 * action, 2 * action - 1)
        pos = jnp.clip(pos + move, 0, self.length - 1)
        terminated = pos == self.length - 1
        no_truncation = jnp.bool_(False)  # the time limit is the base's
        return JaxStep(
            state=pos,
            obs=self._observe(pos),
            reward=terminated.astype(jnp.float32),  # 1 on reaching the goal
            terminated=terminated,
            truncated=no_truncation,
            info={"slipped": slipped},
        )
