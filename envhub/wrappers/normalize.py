"""Wrappers that normalize observations or rewards by running statistics kept in the state."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.arguments import single_agent_only
from envhub.core.env import Environment
from envhub.core.types import TimeStep
from envhub.wrappers.base import StatefulWrapper, WrapperState, batch_shape

Stats = dict[str, jax.Array]


class NormalizeObservation(StatefulWrapper):
    """Normalize observations by running mean and variance, kept in the state.

    The statistics are shared by the whole batch (one mean per feature), outlive episodes and
    resets, and are updated with every step's ``final_obs`` (and the first obs of init and
    ``reset``); ``obs`` and ``final_obs`` are both normalized with the updated values.
    """

    def __init__(self, env: Environment[Any, Any, Any], epsilon: float = 1e-8):
        super().__init__(env)
        self.epsilon = epsilon
        self._replace_space("observation", spaces.Box(-np.inf, np.inf, env.single_observation_space.shape, np.float32))

    def _episode_start(self, ts: TimeStep[Any]) -> Stats:
        shape = self.env.single_observation_space.shape
        fresh = {"mean": jnp.zeros(shape, jnp.float32), "var": jnp.ones(shape, jnp.float32)}
        return self._update({**fresh, "count": jnp.float32(self.epsilon)}, ts.obs)

    def _restart(self, stats: Stats, ts: TimeStep[Any], where: jax.Array | None) -> Stats:
        return self._update(stats, ts.obs) if where is None else stats

    def _normalize(self, stats: Stats, obs: Any) -> jax.Array:
        return (obs - stats["mean"]) / jnp.sqrt(stats["var"] + self.epsilon)

    def _normalized(self, stats: Stats, ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts.replace(obs=self._normalize(stats, ts.obs), final_obs=self._normalize(stats, ts.final_obs))

    def _show_first(self, stats: Stats, ts: TimeStep[Any]) -> TimeStep[Any]:
        return self._normalized(stats, ts)

    def _update(self, stats: Stats, obs: Any) -> Stats:
        batch = jnp.reshape(obs, (-1, *self.env.single_observation_space.shape)).astype(jnp.float32)
        return _merge_moments(stats, jnp.mean(batch, 0), jnp.var(batch, 0), batch.shape[0])

    def _step(self, key: jax.Array, state: WrapperState, action: Any) -> tuple[WrapperState, TimeStep[Any]]:
        env_state, ts = self.env.step(key, state.env_state, action)
        stats = self._update(state.wrapper_state, ts.final_obs)
        return WrapperState(env_state, stats), self._normalized(stats, ts)


class NormalizeReward(StatefulWrapper):
    """Scale rewards by the running standard deviation of the discounted return (kept in the state).

    Each environment keeps its own discounted return, restarted at episode ends and resets; the
    variance is shared by the batch and outlives episodes. ``info["unnormalized_reward"]`` keeps
    the original.
    """

    def __init__(self, env: Environment[Any, Any, Any], gamma: float = 0.99, epsilon: float = 1e-8):
        single_agent_only("NormalizeReward", env, "normalize each agent's reward in your learner instead")
        super().__init__(env)
        self.gamma, self.epsilon = gamma, epsilon

    def _episode_start(self, ts: TimeStep[Any]) -> Stats:
        zeros = jnp.zeros(batch_shape(self.env), jnp.float32)
        return {"return": zeros, "mean": jnp.float32(0), "var": jnp.float32(1), "count": jnp.float32(self.epsilon)}

    def _restart(self, stats: Stats, ts: TimeStep[Any], where: jax.Array | None) -> Stats:
        return {**stats, "return": jnp.where(True if where is None else where, 0.0, stats["return"])}

    def _show_first(self, stats: Stats, ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts.replace(info={**ts.info, "unnormalized_reward": ts.reward})

    def _step(self, key: jax.Array, state: WrapperState, action: Any) -> tuple[WrapperState, TimeStep[Any]]:
        env_state, ts = self.env.step(key, state.env_state, action)
        returns = state.wrapper_state["return"] * self.gamma + ts.reward
        flat = jnp.reshape(returns, (-1,))
        moments = _merge_moments(state.wrapper_state, jnp.mean(flat), jnp.var(flat), flat.shape[0])
        reward = ts.reward / jnp.sqrt(moments["var"] + self.epsilon)
        stats = {**moments, "return": jnp.where(ts.done, 0.0, returns)}
        return WrapperState(env_state, stats), ts.replace(
            reward=reward, info={**ts.info, "unnormalized_reward": ts.reward}
        )


def _merge_moments(stats: Stats, mean: jax.Array, var: jax.Array, n: int) -> Stats:
    """Combine running (mean, var, count) with a batch's moments (parallel Welford)."""
    total = stats["count"] + n
    delta = mean - stats["mean"]
    new_mean = stats["mean"] + delta * n / total
    m2 = stats["var"] * stats["count"] + var * n + delta**2 * stats["count"] * n / total
    return {**stats, "mean": new_mean, "var": m2 / total, "count": total}


__all__ = ["NormalizeObservation", "NormalizeReward"]
