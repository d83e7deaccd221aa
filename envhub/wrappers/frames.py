"""Wrappers with memory across steps: frame stacking and sticky actions."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.arguments import positive_int
from envhub.core.env import Environment
from envhub.core.tree import select
from envhub.core.types import TimeStep
from envhub.errors import InvalidArgumentError
from envhub.wrappers.base import StatefulWrapper, WrapperState, batch_shape

# Every step copies the whole stack and every env holds it in its state (and the space its bounds): past a few
# thousand frames that is memory and time no frame stack should cost; a longer history belongs in the agent.
FRAMES_MAX = 4096


class FrameStack(StatefulWrapper):
    """Observe the last ``num_frames`` observations, stacked on a new axis after the batch axis.

    After a reset (or auto-reset) the stack holds only the new episode's first observation,
    repeated: no frame of the old episode leaks into the new one. ``final_obs`` is the stack that
    ends with the observation reached.
    """

    def __init__(self, env: Environment[Any, Any, Any], num_frames: int):
        single = env.single_observation_space
        if not isinstance(single, spaces.Box):
            raise InvalidArgumentError(f"FrameStack needs a Box observation space; {env.id!r} has {single!r}.")
        num_frames = positive_int("num_frames", num_frames, where="for FrameStack")
        if num_frames > FRAMES_MAX:
            raise InvalidArgumentError(
                f"num_frames={num_frames} for FrameStack: use an int from 1 to {FRAMES_MAX} (every step copies the "
                "whole stack); keep a longer history in the agent (a recurrent state or a replay buffer)."
            )
        super().__init__(env)
        self.num_frames = num_frames
        stacked = (num_frames, *single.shape)
        low, high = np.broadcast_to(single.low, stacked), np.broadcast_to(single.high, stacked)
        self._replace_space("observation", spaces.Box(low, high, dtype=single.dtype))
        self._axis = len(batch_shape(env))

    def _fill(self, obs: jax.Array) -> jax.Array:
        return jnp.repeat(jnp.expand_dims(obs, self._axis), self.num_frames, axis=self._axis)

    def _push(self, frames: jax.Array, obs: jax.Array) -> jax.Array:
        older = jax.lax.slice_in_dim(frames, 1, self.num_frames, axis=self._axis)
        return jnp.concatenate([older, jnp.expand_dims(obs, self._axis)], axis=self._axis)

    def _episode_start(self, ts: TimeStep[Any]) -> jax.Array:
        return self._fill(ts.obs)

    def _show_first(self, frames: jax.Array, ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts.replace(obs=frames, final_obs=frames)

    def _step(self, key: jax.Array, state: WrapperState, action: Any) -> tuple[WrapperState, TimeStep[Any]]:
        env_state, ts = self.env.step(key, state.env_state, action)
        reached = self._push(state.wrapper_state, ts.final_obs)
        frames = select(ts.done, self._fill(ts.obs), reached)
        return WrapperState(env_state, frames), ts.replace(obs=frames, final_obs=reached)


class StickyAction(StatefulWrapper):
    """With probability ``prob``, repeat the previous action instead of the given one.

    The draw uses its own key, split from the step key. At the start of every episode the
    previous action is ``noop`` (default 0), so nothing sticks across an episode boundary.
    """

    def __init__(self, env: Environment[Any, Any, Any], prob: float = 0.25, noop: Any = 0):
        if isinstance(env.action_space, spaces.Tree):
            raise InvalidArgumentError(
                f"StickyAction needs an array action space; {env.id!r} has {env.action_space!r}."
            )
        if not 0.0 <= prob <= 1.0:
            raise InvalidArgumentError(f"StickyAction(prob={prob!r}) needs a probability in [0, 1].")
        super().__init__(env)
        self.prob = prob
        self._noop = np.broadcast_to(np.asarray(noop, env.action_space.dtype), env.action_space.shape)

    def _episode_start(self, ts: TimeStep[Any]) -> jax.Array:
        return jnp.asarray(self._noop)

    def _step(self, key: jax.Array, state: WrapperState, action: Any) -> tuple[WrapperState, TimeStep[Any]]:
        sticky_key, step_key = jax.random.split(key)
        stick = jax.random.bernoulli(sticky_key, self.prob, batch_shape(self.env))
        taken = select(stick, state.wrapper_state, action)
        env_state, ts = self.env.step(step_key, state.env_state, taken)
        return WrapperState(env_state, select(ts.done, jnp.asarray(self._noop), taken)), ts


__all__ = ["FRAMES_MAX", "FrameStack", "StickyAction"]
