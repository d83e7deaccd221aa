"""``AleLoop``: ALE's emulators stepped from Python (``env.host_loop()``): ALE's own ``send``/``recv`` and partial
``reset`` on NumPy arrays, no XLA call per step, for code that steps an env from Python (the Sebulba factory).

The steps are the env's compiled ones (``AleEnvironment._step``) on emulators of the loop's own, made by its first
``reset`` and let go with the env (its ``close``) or the loop: seeded as ``init(key)`` seeds, envhub's time limit
counted per env, ``final_obs`` the observation the step reached. An episode that ends restarts in the same step,
continuing its emulator's own random stream (as the compiled steps' partial reset with seed -1): a game over by
ALE's same-step autoreset (in its worker threads, beside the other emulators' steps: a reset on the main thread
after the step cost ~8 % of Pong's steps/s over full episodes), a time limit by ALE's partial reset. ALE's arrays
are new on every call: handed out as they are, read-only. An action outside the action set is refused here whatever
``validate_actions`` says: it would hang ALE's threads.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.plugin import TimeStep, truncated_unless_terminated
from envhub_ale import xla
from envhub_ale.guards import refuse_actions_outside


class AleLoop:
    """``reset(key)`` and ``step(action)`` of ``env``'s game on emulators of this loop's own (see the module)."""

    def __init__(self, env: Any):
        self.env, self._n, self._vector = env, env._n, None
        self._paddle = np.ones(self._n, np.float32)  # as ALE's XLA step passes it for discrete actions
        self._in_order = np.arange(self._n, dtype=np.int32)
        self._in_order_bytes = self._in_order.tobytes()
        self._shape = env._env_shape()
        self._obs_shape = self._shape + tuple(env.single_observation_space.shape)
        self._no_reward = _read_only(np.zeros(self._shape, np.float32))
        self._no_flag = _read_only(np.zeros(self._shape, bool))
        # envhub's time limit, counted without an array op on most steps: env i's episode is ``self._t - start[i]``
        # steps old; only a step where the oldest episode reaches the limit (or one ends) looks at every env
        self._t, self._start, self._oldest = 0, np.zeros(self._n, np.int64), 0

    def reset(self, key: jax.Array) -> TimeStep[Any]:
        """Every emulator reseeded from ``key`` as ``init(key)`` seeds it; the first TimeStep."""
        if self._vector is None:  # ALE restarts an episode that ends in the step's own thread, as envhub's same step
            self._vector = self.env._new_vector(autoreset_mode="SameStep")
        seeds = np.asarray(xla.seeds_for(key, self._n))
        obs, info = self._ordered(*self._vector.ale.reset(self._in_order, seeds))
        self._t, self._start[:], self._oldest = 0, 0, 0
        obs = self._obs(obs)
        return TimeStep(obs, self._no_reward, self._no_flag, self._no_flag, obs, self._info(info))

    def step(self, action: Any) -> TimeStep[Any]:
        """Every emulator stepped with ``action`` (checked by ``CheckedLoop``); ended episodes restart in this step.

        Lean on purpose: on a 2-core machine the Python between ALE's ``recv`` and the next ``send`` runs several
        times slower than alone (ALE's threads hold the cores), and costs the emulators' next step too."""
        if self.env.num_envs is None:
            action = np.reshape(action, (1,))
        if not self.env.validate_actions:  # else CheckedLoop refused it already, by the same rule
            refuse_actions_outside(self.env, action)
        ale = self._vector.ale
        ale.send(action, self._paddle)
        obs, reward, terminated, _, info = self._ordered(*ale.recv())
        self._t += 1
        reward = _read_only(reward.astype(np.float32).reshape(self._shape))
        if terminated.any() or self._t - self._oldest >= self.env.max_episode_steps:
            return self._ended(obs, reward, terminated, info)
        obs, terminated = self._obs(obs), _read_only(terminated.reshape(self._shape))
        return TimeStep(obs, reward, terminated, self._no_flag, obs, self._info(info))

    def _ended(self, obs: np.ndarray, reward: np.ndarray, terminated: np.ndarray, info: dict[str, Any]) -> Any:
        """A step where an episode ended (ALE restarted it in its step) or reached envhub's limit (restarted here)."""
        now = reached = self._obs(obs)
        if terminated.any():  # ALE's same-step autoreset: info["final_obs"] holds the frames they reached
            reached = self._obs(np.where(self._rows(terminated), info["final_obs"], obs))
        truncated = truncated_unless_terminated(terminated, self._t - self._start >= self.env.max_episode_steps)
        if truncated.any():  # ALE's partial reset gives every env's frame: the cut ones' new first, the others' as is
            cut = np.flatnonzero(truncated).astype(np.int32)
            obs, info = self._ordered(*self._vector.ale.reset(cut, np.full(cut.size, -1, np.int32)))
            now = self._obs(obs)
        self._start[terminated | truncated] = self._t
        self._oldest = int(self._start.min())
        flags = (_read_only(terminated.reshape(self._shape)), _read_only(truncated.reshape(self._shape)))
        return TimeStep(now, reward, *flags, reached, self._info(info))

    def release(self) -> None:
        """Let the loop's emulators go (the env's ``close`` calls it): ALE frees them when its vector env is collected
        (its ``close()`` only marks it closed), here at once, or with this loop."""
        self._vector = None

    def _ordered(self, *arrays: Any) -> Any:
        """ALE's arrays in env order (``info["env_id"]``; 0.12.1 always returns them so, checked here each call)."""
        info = arrays[-1]
        if info["env_id"].tobytes() == self._in_order_bytes:
            return arrays
        rows = np.argsort(info["env_id"])
        return (*(a[rows] for a in arrays[:-1]), {k: v[rows] for k, v in info.items()})

    def _rows(self, flags: np.ndarray) -> np.ndarray:
        """``flags`` (one per env) broadcast over ALE's frames."""
        return flags.reshape((self._n,) + (1,) * len(self._vector.single_observation_space.shape))

    def _obs(self, obs: np.ndarray) -> np.ndarray:
        return _read_only(obs.reshape(self._obs_shape))

    def _info(self, info: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {k: _read_only(info[k].reshape(self._shape)) for k in ("episode_frame_number", "lives")}


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


__all__ = ["AleLoop"]
