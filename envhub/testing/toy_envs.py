"""Toy environments for testing wrappers and tools on a known, cheap, JAX-native env.

``Corridor`` is a correct envhub environment (it passes every conformance check) that compiles in
well under a second, so a plugin or wrapper author can test code on it before a real backend::

    from envhub import testing
    from envhub.testing.toy_envs import Corridor

    testing.check_env(lambda **kw: MyWrapper(Corridor(**kw)), testing.Options(time_limit_kwarg="max_steps"))

``Corridor(bug=...)`` switches on one contract violation (see ``BUGS``): the kit's own tests use
these to prove each check fails where it should. ``ToyPlugin`` registers ``Corridor-v0`` and an
unavailable ``Offline-v0`` in a ``Registry`` (``registry.register_backend("toy", ToyPlugin())``).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.env import Environment
from envhub.core.types import TimeStep
from envhub.errors import ActionError, InvalidArgumentError
from envhub.registry.hookspecs import hookimpl
from envhub.registry.specs import check_options_for

#: Each ``Corridor(bug=...)`` and the contract violation it switches on.
BUGS: dict[str, str] = {
    "next_step_reset": "a dummy step after each episode that ignores its action (envpool-style reset)",
    "final_obs": "final_obs is the new episode's first obs instead of the one reached",
    "both_flags": "truncated is set on terminal steps too (as brax's done does)",
    "weak_info": "info holds a weak-typed float at step (bool at init)",
    "ignores_key": "every episode starts in the same cell, whatever the key",
    "float_reward": "the step reward is weak-typed",
    "no_truncation": "the time limit is never applied",
    "obs_dtype": "float16 obs (and final_obs) in a float32 Box",
    "final_obs_dtype": "float16 final_obs, everywhere, in a float32 Box (values equal, only its dtype is wrong)",
    "reset_state": "reset returns a state with an extra field",
    "host_callback": "step calls the host (jax.pure_callback on the reward): not pure XLA, not exportable",
    "unchecked_values": "step skips the action-value check (an out-of-range action moves the agent)",
    "refusal_deletes_state": "a refused action deletes the state passed in (as a buffer donated to the call would)",
}


class Corridor(Environment[Any, Any, Any]):
    """Walk a corridor of ``length`` cells: action 1 moves right, 0 left; the right end terminates.

    Args:
        length: Cells; episodes start in the left half, at a cell drawn from the key.
        max_steps: The time limit (``truncated`` after this many steps).
        bug: ``None``, or a key of ``BUGS``: the one contract violation to switch on.
    """

    def __init__(self, length: int = 6, max_steps: int = 20, bug: str | None = None):
        if bug is not None and bug not in BUGS:
            raise InvalidArgumentError(f"Corridor(bug={bug!r}) is not a known bug; use one of {sorted(BUGS)} or None.")
        for name, value in (("length", length), ("max_steps", max_steps)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise InvalidArgumentError(f"Corridor({name}={value!r}): use an int >= 1.")
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

    def _final(self, obs: jax.Array) -> jax.Array:
        return obs.astype(jnp.float16) if self.bug == "final_obs_dtype" else obs

    def _start(self, key: jax.Array) -> jax.Array:
        if self.bug == "ignores_key":
            return jnp.int32(0)
        return jax.random.randint(key, (), 0, self.length // 2)

    def _init(self, key: jax.Array, params: Any = None) -> tuple[Any, TimeStep[Any]]:  # no params: never given
        pos = self._start(key)
        state = {"pos": pos, "t": jnp.int32(0), "pending_reset": jnp.bool_(False)}
        ts = TimeStep.first(self._obs(pos, state["t"]), {"moved": jnp.bool_(False)})
        return state, ts.replace(final_obs=self._final(ts.obs))

    def _reset(self, key: jax.Array, state: Any, params: Any = None) -> tuple[Any, TimeStep[Any]]:
        state, ts = self._init(key)
        return ({**state, "episodes": jnp.int32(1)} if self.bug == "reset_state" else state), ts

    def step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        if self.bug == "unchecked_values":
            return self._step(key, state, action)
        if self.bug == "refusal_deletes_state":
            try:
                return super().step(key, state, action)
            except ActionError:
                for leaf in jax.tree.leaves(state):
                    if isinstance(leaf, jax.Array) and not isinstance(leaf, jax.core.Tracer):
                        leaf.delete()
                raise
        return super().step(key, state, action)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        if self.bug == "next_step_reset":
            return self._step_next_reset(key, state, action)
        pos = jnp.clip(state["pos"] + 2 * action - 1, 0, self.length)
        t = state["t"] + 1
        terminated = pos >= self.length
        truncated = (t >= self.max_steps) & ~terminated
        if self.bug == "no_truncation":
            truncated = jnp.bool_(False)
        if self.bug == "both_flags":
            truncated = (t >= self.max_steps) | terminated
        done = terminated | truncated
        reached = self._obs(pos, t)
        new_pos = jnp.where(done, self._start(key), pos)
        new_t = jnp.where(done, 0, t)
        obs = self._obs(new_pos, new_t)
        info = {"moved": pos != state["pos"]}
        if self.bug == "weak_info":
            info = {"moved": jnp.where(pos != state["pos"], True, False) * 1.0}
        # Built field by field, not with TimeStep.transition, so that the bugs above get through.
        ts = TimeStep(
            obs=obs,
            reward=self._reward(terminated),
            terminated=terminated,
            truncated=truncated,
            final_obs=self._final(obs if self.bug == "final_obs" else reached),
            info=info,
        )
        return {"pos": new_pos, "t": new_t, "pending_reset": jnp.bool_(False)}, ts

    def _reward(self, terminated: jax.Array) -> jax.Array:
        if self.bug == "float_reward":
            return 1.0 * terminated
        reward = terminated.astype(jnp.float32)
        if self.bug == "host_callback":
            return jax.pure_callback(
                np.asarray, jax.ShapeDtypeStruct((), jnp.float32), reward, vmap_method="sequential"
            )
        return reward

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


#: The toy backend's conformance options, in the one shape every plugin uses (``"*"``: all envs).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {"*": {"time_limit_kwarg": "max_steps"}}


class ToyPlugin:
    """An in-process backend offering ``Corridor-v0`` (kwargs reach ``Corridor``) and an unavailable ``Offline-v0``."""

    @hookimpl
    def envhub_register_envs(self, register: Any) -> None:
        register(
            "Corridor-v0",
            Corridor,
            check_options=check_options_for(CHECK_OPTIONS, "Corridor-v0"),
            description="a walk to the right end",
        )
        register("Offline-v0", None, unavailable="needs a download")


__all__ = ["BUGS", "CHECK_OPTIONS", "Corridor", "ToyPlugin"]
