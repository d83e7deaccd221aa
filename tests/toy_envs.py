"""A tiny JAX-native environment for the core's tests, with switchable contract violations."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

import envhub
from envhub import spaces
from envhub.types import TimeStep


class Corridor(envhub.Environment[Any, Any, Any]):
    """Walk a corridor of ``length`` cells: action 1 moves right, 0 left; the right end terminates.

    ``bug`` switches on one contract violation, so tests can prove the kit catches it:
    "next_step_reset" (a dummy step after each episode), "final_obs" (final_obs is the reset obs),
    "both_flags" (truncated set on terminal steps too), "weak_info" (weak-typed info at step),
    "ignores_key" (every episode starts in the same cell), "float_reward" (weak-typed reward),
    "no_truncation" (the time limit is never applied), "obs_dtype" (float16 obs in a float32 Box),
    "reset_state" (reset returns a state with an extra field).
    """

    def __init__(self, length: int = 6, max_steps: int = 20, bug: str | None = None):
        self.length, self.max_steps, self.bug = length, max_steps, bug

    @property
    def action_space(self) -> spaces.Space:
        return spaces.Discrete(2)

    @property
    def observation_space(self) -> spaces.Space:
        return spaces.Box(0.0, float(self.length), (2,))

    def _obs(self, pos: jax.Array, t: jax.Array) -> jax.Array:
        obs = jnp.stack([pos, t]).astype(jnp.float32) * jnp.array([1.0, 0.0], jnp.float32)
        return obs.astype(jnp.float16) if self.bug == "obs_dtype" else obs

    def _start(self, key: jax.Array) -> jax.Array:
        if self.bug == "ignores_key":
            return jnp.int32(0)
        return jax.random.randint(key, (), 0, self.length // 2)

    def _init(self, key: jax.Array) -> tuple[Any, TimeStep[Any]]:
        pos = self._start(key)
        state = {"pos": pos, "t": jnp.int32(0), "pending_reset": jnp.bool_(False)}
        return state, TimeStep.first(self._obs(pos, state["t"]), {"moved": jnp.bool_(False)})

    def _reset(self, key: jax.Array, state: Any) -> tuple[Any, TimeStep[Any]]:
        state, ts = self._init(key)
        return ({**state, "episodes": jnp.int32(1)} if self.bug == "reset_state" else state), ts

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        if self.bug == "next_step_reset":
            return self._step_next_reset(key, state, action)
        pos = jnp.clip(state["pos"] + 2 * action - 1, 0, self.length)
        t = state["t"] + 1
        terminated = pos >= self.length
        truncated = (t >= self.max_steps) & ~terminated
        if self.bug == "no_truncation":
            truncated = jnp.bool_(False)
        if self.bug == "both_flags":  # every end reported as a time limit too, as brax's done does
            truncated = (t >= self.max_steps) | terminated
        done = terminated | truncated
        reached = self._obs(pos, t)
        start = self._start(key)
        new_pos = jnp.where(done, start, pos)
        new_t = jnp.where(done, 0, t)
        obs = self._obs(new_pos, new_t)
        info = {"moved": pos != state["pos"]}
        if self.bug == "weak_info":
            info = {"moved": jnp.where(pos != state["pos"], True, False) * 1.0}
        ts = TimeStep(
            obs=obs,
            reward=(1.0 * terminated) if self.bug == "float_reward" else terminated.astype(jnp.float32),
            terminated=terminated,
            truncated=truncated,
            final_obs=obs if self.bug == "final_obs" else reached,
            info=info,
        )
        return {"pos": new_pos, "t": new_t, "pending_reset": jnp.bool_(False)}, ts

    def _step_next_reset(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        """envpool-style: the step after an episode ends ignores the action and only resets."""
        pending = state["pending_reset"]
        moved = jnp.clip(state["pos"] + 2 * action - 1, 0, self.length)
        pos = jnp.where(pending, self._start(key), moved)
        t = jnp.where(pending, 0, state["t"] + 1)
        terminated = (pos >= self.length) & ~pending
        truncated = (t >= self.max_steps) & ~terminated & ~pending
        obs = self._obs(pos, t)
        ts = TimeStep(obs, terminated.astype(jnp.float32), terminated, truncated, obs, {"moved": pos != state["pos"]})
        return {"pos": pos, "t": t, "pending_reset": terminated | truncated}, ts


class ToyPlugin:
    """An in-process plugin offering Corridor (and its buggy variants) plus one unavailable env."""

    @envhub.hookimpl
    def envhub_register_envs(self, register: Any) -> None:
        register(
            "Corridor-v0",
            Corridor,
            check_options={"time_limit_kwarg": "max_steps"},
            description="a walk to the right end",
        )
        register("Offline-v0", None, unavailable="needs a download")
