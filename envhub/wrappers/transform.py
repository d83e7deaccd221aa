"""Wrappers that transform observations, rewards or actions, step by step."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.env import Environment
from envhub.errors import InvalidArgumentError
from envhub.types import TimeStep
from envhub.wrappers.base import TimeStepWrapper, Wrapper, WrapperState, batch_shape


class DropFinalObs(TimeStepWrapper):
    """Set ``ts.final_obs`` to ``None`` everywhere, to save memory when nothing bootstraps from it."""

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts.replace(final_obs=None)


class ClipReward(TimeStepWrapper):
    """Clip the reward to ``[low, high]``; ``info["unclipped_reward"]`` keeps the original."""

    def __init__(self, env: Environment[Any, Any, Any], low: float = -1.0, high: float = 1.0):
        super().__init__(env)
        self.low, self.high = low, high

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        clipped = jnp.clip(ts.reward, self.low, self.high)
        return ts.replace(reward=clipped, info={**ts.info, "unclipped_reward": ts.reward})


class FlattenObservation(TimeStepWrapper):
    """Flatten a pytree observation into one float32 vector per environment (``obs`` and ``final_obs``).

    Leaves are raveled in pytree order; integer leaves (Discrete, MultiDiscrete) keep their value,
    not a one-hot. ``observation_space`` becomes the matching ``Box``.
    """

    def __init__(self, env: Environment[Any, Any, Any]):
        super().__init__(env)
        single = env.single_observation_space
        leaves = single.leaves if isinstance(single, spaces.Tree) else [single]
        low = np.concatenate([np.ravel(_bounds(s)[0]) for s in leaves]).astype(np.float32)
        high = np.concatenate([np.ravel(_bounds(s)[1]) for s in leaves]).astype(np.float32)
        self._replace_observation_space(spaces.Box(low, high))

    def _flatten(self, obs: Any) -> jax.Array:
        lead = batch_shape(self.env)
        return jnp.concatenate([jnp.reshape(x, (*lead, -1)).astype(jnp.float32) for x in jax.tree.leaves(obs)], axis=-1)

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts.replace(obs=self._flatten(ts.obs), final_obs=self._flatten(ts.final_obs))


def _bounds(space: spaces.Space) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(space, spaces.Box):
        return space.low, space.high
    if isinstance(space, spaces.MultiDiscrete):
        return space.start, space.start + space.nvec - 1
    raise TypeError(f"FlattenObservation cannot flatten {space!r}.")


class Discretize(Wrapper):
    """Turn a continuous ``Box`` action space into ``bins`` evenly spaced values per dimension.

    The action space becomes ``MultiDiscrete`` of the Box's shape; action ``i`` of a dimension
    means ``low + i * (high - low) / (bins - 1)``. The Box must be bounded.
    """

    def __init__(self, env: Environment[Any, Any, Any], bins: int):
        box = env.single_action_space
        if not isinstance(box, spaces.Box) or not (np.isfinite(box.low).all() and np.isfinite(box.high).all()):
            raise TypeError(f"Discretize needs a bounded Box action space; {env.id!r} has {box!r}.")
        if not isinstance(bins, int) or bins < 2:
            raise InvalidArgumentError(f"Discretize(bins={bins!r}) needs an int of at least 2.")
        super().__init__(env)
        self.bins, self._box = bins, box
        self._replace_action_space(spaces.MultiDiscrete(np.full(box.shape, bins)))

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        step = (self._box.high - self._box.low) / (self.bins - 1)
        continuous = (self._box.low + action * step).astype(self._box.dtype)
        return self.env.step(key, state, continuous)


class NormalizeObservation(Wrapper):
    """Normalize observations by running mean and variance, kept in the state.

    The statistics are shared by the whole batch (one mean per feature) and updated with every
    step's ``final_obs``; ``obs`` and ``final_obs`` are both normalized with the updated values.
    """

    wraps_state = True  # its state is WrapperState(inner, extra)

    def __init__(self, env: Environment[Any, Any, Any], epsilon: float = 1e-8):
        super().__init__(env)
        self.epsilon = epsilon
        self._replace_observation_space(spaces.Box(-np.inf, np.inf, env.single_observation_space.shape, np.float32))

    def _fresh(self) -> dict[str, jax.Array]:
        shape = self.env.single_observation_space.shape
        count = jnp.float32(self.epsilon)
        return {"mean": jnp.zeros(shape, jnp.float32), "var": jnp.ones(shape, jnp.float32), "count": count}

    def _normalize(self, stats: dict[str, jax.Array], obs: Any) -> jax.Array:
        return (obs - stats["mean"]) / jnp.sqrt(stats["var"] + self.epsilon)

    def _apply(self, inner: Any, ts: TimeStep[Any], stats: dict[str, jax.Array]) -> tuple[WrapperState, TimeStep[Any]]:
        obs, final_obs = self._normalize(stats, ts.obs), self._normalize(stats, ts.final_obs)
        return WrapperState(inner, stats), ts.replace(obs=obs, final_obs=final_obs)

    def _update(self, stats: dict[str, jax.Array], obs: Any) -> dict[str, jax.Array]:
        batch = jnp.reshape(obs, (-1, *self.env.single_observation_space.shape)).astype(jnp.float32)
        return _merge_moments(stats, jnp.mean(batch, 0), jnp.var(batch, 0), batch.shape[0])

    def _first(self, inner: Any, ts: TimeStep[Any], stats: dict[str, jax.Array]) -> tuple[WrapperState, TimeStep[Any]]:
        return self._apply(inner, ts, self._update(stats, ts.obs))

    def _init(self, key: jax.Array) -> tuple[WrapperState, TimeStep[Any]]:
        return self._first(*self.env.init(key), self._fresh())

    def _reset(self, key: jax.Array, state: WrapperState) -> tuple[WrapperState, TimeStep[Any]]:
        return self._first(*self.env.reset(key, state.inner), state.extra)

    def _reset_where(self, key: jax.Array, state: WrapperState, where: jax.Array) -> tuple[WrapperState, TimeStep[Any]]:
        inner, ts = self.env.reset(key, state.inner, where=where)
        return self._apply(inner, ts, state.extra)

    def _step(self, key: jax.Array, state: WrapperState, action: Any) -> tuple[WrapperState, TimeStep[Any]]:
        inner, ts = self.env.step(key, state.inner, action)
        return self._apply(inner, ts, self._update(state.extra, ts.final_obs))


class NormalizeReward(Wrapper):
    """Scale rewards by the running standard deviation of the discounted return (kept in the state).

    Each environment keeps its own discounted return, restarted at episode ends; the variance is
    shared by the batch. ``info["unnormalized_reward"]`` keeps the original.
    """

    wraps_state = True  # its state is WrapperState(inner, extra)

    def __init__(self, env: Environment[Any, Any, Any], gamma: float = 0.99, epsilon: float = 1e-8):
        super().__init__(env)
        self.gamma, self.epsilon = gamma, epsilon

    def _fresh(self) -> dict[str, jax.Array]:
        zeros = jnp.zeros(batch_shape(self.env), jnp.float32)
        return {"return": zeros, "mean": jnp.float32(0), "var": jnp.float32(1), "count": jnp.float32(self.epsilon)}

    def _first(self, inner: Any, ts: TimeStep[Any], extra: dict[str, jax.Array]) -> tuple[WrapperState, TimeStep[Any]]:
        return WrapperState(inner, extra), ts.replace(info={**ts.info, "unnormalized_reward": ts.reward})

    def _init(self, key: jax.Array) -> tuple[WrapperState, TimeStep[Any]]:
        return self._first(*self.env.init(key), self._fresh())

    def _reset(self, key: jax.Array, state: WrapperState) -> tuple[WrapperState, TimeStep[Any]]:
        extra = {**state.extra, "return": jnp.zeros_like(state.extra["return"])}
        return self._first(*self.env.reset(key, state.inner), extra)

    def _reset_where(self, key: jax.Array, state: WrapperState, where: jax.Array) -> tuple[WrapperState, TimeStep[Any]]:
        extra = {**state.extra, "return": jnp.where(where, 0.0, state.extra["return"])}
        return self._first(*self.env.reset(key, state.inner, where=where), extra)

    def _step(self, key: jax.Array, state: WrapperState, action: Any) -> tuple[WrapperState, TimeStep[Any]]:
        inner, ts = self.env.step(key, state.inner, action)
        returns = state.extra["return"] * self.gamma + ts.reward
        flat = jnp.reshape(returns, (-1,))
        moments = _merge_moments(state.extra, jnp.mean(flat), jnp.var(flat), flat.shape[0])
        reward = ts.reward / jnp.sqrt(moments["var"] + self.epsilon)
        extra = {**moments, "return": jnp.where(ts.done, 0.0, returns)}
        return WrapperState(inner, extra), ts.replace(reward=reward, info={**ts.info, "unnormalized_reward": ts.reward})


def _merge_moments(stats: dict[str, jax.Array], mean: jax.Array, var: jax.Array, n: int) -> dict[str, jax.Array]:
    """Combine running (mean, var, count) with a batch's moments (parallel Welford)."""
    total = stats["count"] + n
    delta = mean - stats["mean"]
    new_mean = stats["mean"] + delta * n / total
    m2 = stats["var"] * stats["count"] + var * n + delta**2 * stats["count"] * n / total
    return {**stats, "mean": new_mean, "var": m2 / total, "count": total}


__all__ = [
    "ClipReward",
    "Discretize",
    "DropFinalObs",
    "FlattenObservation",
    "NormalizeObservation",
    "NormalizeReward",
]
