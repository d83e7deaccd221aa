"""Chain: a slippery walk to the right end of a line of cells, pure JAX."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

import envhub
from envhub import spaces


class Chain(envhub.Environment[Any, Any, Any]):
    """Move left (0) or right (1); with probability ``slip`` the move goes the other way.

    Reaching the right end terminates with reward 1; ``max_steps`` truncates. Auto-resets in the
    same step, with the reached observation in ``final_obs``.
    """

    def __init__(self, length: int = 8, slip: float = 0.1, max_steps: int = 50):
        self.length, self.slip, self.max_steps = length, slip, max_steps

    @property
    def action_space(self) -> spaces.Space:
        return spaces.Discrete(2)

    @property
    def observation_space(self) -> spaces.Space:
        return spaces.Box(0.0, 1.0, (self.length,))

    def _observe(self, pos: jax.Array) -> jax.Array:
        return jax.nn.one_hot(pos, self.length, dtype=jnp.float32)

    def _start(self, key: jax.Array) -> dict[str, jax.Array]:
        return {"pos": jax.random.randint(key, (), 0, self.length // 2), "t": jnp.int32(0)}

    def _init(self, key: jax.Array) -> tuple[Any, envhub.TimeStep[Any]]:
        state = self._start(key)
        return state, envhub.TimeStep.first(self._observe(state["pos"]), {"slipped": jnp.bool_(False)})

    def _reset(self, key: jax.Array, state: Any) -> tuple[Any, envhub.TimeStep[Any]]:
        return self._init(key)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, envhub.TimeStep[Any]]:
        slip_key, reset_key = jax.random.split(key)
        slipped = jax.random.uniform(slip_key) < self.slip
        move = jnp.where(slipped, 1 - 2 * action, 2 * action - 1)
        pos = jnp.clip(state["pos"] + move, 0, self.length - 1)
        t = state["t"] + 1
        terminated = pos == self.length - 1
        done = terminated | (t >= self.max_steps)
        fresh = self._start(reset_key)
        next_state = {"pos": jnp.where(done, fresh["pos"], pos), "t": jnp.where(done, 0, t)}
        # TimeStep.transition applies the flag rule: at the time limit on the goal, terminated wins.
        ts = envhub.TimeStep.transition(
            obs=self._observe(next_state["pos"]),
            reward=terminated,
            terminated=terminated,
            truncated=t >= self.max_steps,
            final_obs=self._observe(pos),
            info={"slipped": slipped},
        )
        return next_state, ts
