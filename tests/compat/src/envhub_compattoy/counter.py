"""Counter: count up to ``size`` from a random start, in pure JAX, on envhub's JAX base."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from envhub.plugin import JaxEnvironment, JaxStep, spaces


class Counter(JaxEnvironment):
    """Action 1 adds one to the count, 0 waits; reaching ``size`` terminates with reward 1."""

    def __init__(self, size: int = 5, *, num_envs: int | None = None, max_episode_steps: int | None = 20):
        super().__init__(
            observation_space=spaces.Box(0.0, float(size), (1,)),
            action_space=spaces.Discrete(2),
            num_envs=num_envs,
            max_episode_steps=max_episode_steps,
        )
        self.size = size

    def _reset_one(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        count = jax.random.randint(key, (), 0, self.size)
        return count, count.astype(jnp.float32)[None]

    def _step_one(self, key: jax.Array, count: jax.Array, action: jax.Array) -> JaxStep:
        count = jnp.minimum(count + action, self.size)
        terminated = count == self.size
        return JaxStep(
            state=count,
            obs=count.astype(jnp.float32)[None],
            reward=terminated.astype(jnp.float32),
            terminated=terminated,
            truncated=jnp.bool_(False),
            info={},
        )
