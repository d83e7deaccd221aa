"""``to_gymnasium_vector``: a batched envhub env behind gymnasium's ``VectorEnv`` API, in any autoreset mode.

envhub resets an env in the step that ends its episode (``ts.obs`` the new first observation,
``ts.final_obs`` the one reached). gymnasium's modes from that:

- ``SAME_STEP``: as envhub; ``info["final_obs"]``/``info["final_info"]`` (masks ``_final_obs``,
  ``_final_info``) hold what the ending step reached.
- ``NEXT_STEP`` (gymnasium's default): the ending step returns the observation reached; the next
  step ignores the action of those envs and returns a new episode's first observation, reward 0,
  not terminated nor truncated (they are reset again then, so no step of theirs is lost).
- ``DISABLED``: the ending step returns the observation reached; ``reset(options={"reset_mask": m})``
  starts new episodes where ``m`` (a bool array of shape ``(num_envs,)``, as gymnasium's own vector envs take).

The contract (refusals, final_obs, close, pickling) is ``envhub.interop.contract``'s.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.errors import InvalidArgumentError
from envhub.host.gymnasium_spaces import to_gymnasium_space
from envhub.interop.compiled import Runner
from envhub.interop.contract import Exported, Made, Target, library_missing
from envhub.interop.flags import checked_mask, drawn_modes

try:
    import gymnasium
    from gymnasium.vector import AutoresetMode
    from gymnasium.vector.utils import batch_space
except ImportError as exc:  # pragma: no cover - exercised when it is absent
    raise library_missing("to_gymnasium_vector", "gymnasium", "gymnasium") from exc

FIXES = {"multi-agent": "gymnasium's VectorEnv is single-agent"}
TARGET = Target("to_gymnasium_vector", "gymnasium", batched=True, reached="step's obs at an end", fixes=FIXES)


def to_gymnasium_vector(env: Any, seed: int = 0, autoreset_mode: Any = "NextStep") -> EnvhubVectorEnv:
    """Expose a batched single-agent envhub env as a ``gymnasium.vector.VectorEnv``.

    ``autoreset_mode``: a ``gymnasium.vector.AutoresetMode`` (or its value or name): ``NEXT_STEP`` (gymnasium's
    default), ``SAME_STEP`` (envhub's own: ``info["final_obs"]``) or ``DISABLED`` (``reset(options={"reset_mask":
    mask})``); see the module docstring. It pickles as this call (the env by its make id).

    Raises:
        InvalidArgumentError: ``env`` is not a batched single-agent envhub env or drops ``final_obs``; ``seed`` is no
            int from 0 to 2**63 - 1; ``autoreset_mode`` is no gymnasium mode.
        ClosedEnvironmentError: ``env`` is closed.
    """
    return EnvhubVectorEnv(TARGET.check(env, seed=seed, autoreset_mode=parse_autoreset_mode(autoreset_mode)))


def _merge(where: np.ndarray, new: Any, old: Any) -> Any:
    """Per env, ``new`` where ``where`` else ``old`` (NumPy pytrees leading with the batch)."""

    def pick(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where(where.reshape(where.shape + (1,) * (a.ndim - 1)), a, b)

    return jax.tree.map(pick, new, old)


def parse_autoreset_mode(mode: Any) -> AutoresetMode:
    """``mode`` as an ``AutoresetMode`` (its value or name also accepted)."""
    if isinstance(mode, AutoresetMode):
        return mode
    for m in AutoresetMode:
        if isinstance(mode, str) and mode.lower() in (m.value.lower(), m.name.lower()):
            return m
    names = ", ".join(f"AutoresetMode.{m.name}" for m in AutoresetMode)
    raise InvalidArgumentError(f"autoreset_mode={mode!r} is not a gymnasium autoreset mode; use one of {names}.")


class EnvhubVectorEnv(Exported, gymnasium.vector.VectorEnv):  # type: ignore[type-arg]
    """A batched envhub env as a ``gymnasium.vector.VectorEnv``, made by ``to_gymnasium_vector``; outputs are
    writable NumPy arrays."""

    def __init__(self, made: Made):
        self.made = made
        self.env = env = made.env
        assert env.num_envs is not None
        self.autoreset_mode = made.flags["autoreset_mode"]
        self._runner = Runner(env, made.flags["seed"])
        self.num_envs = env.num_envs
        self.single_observation_space = to_gymnasium_space(env.single_observation_space)
        self.single_action_space = to_gymnasium_space(env.single_action_space)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.metadata = {
            "autoreset_mode": self.autoreset_mode,
            "render_modes": drawn_modes(env),
        }
        self.render_mode = None
        self._pending = np.zeros(self.num_envs, bool)  # NEXT_STEP: envs whose episode ended last step
        self._obs: Any = None  # DISABLED: the last observations, for a masked reset

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        mask = (options or {}).get("reset_mask")
        if mask is not None:
            if self.autoreset_mode != AutoresetMode.DISABLED:
                raise InvalidArgumentError(
                    f"reset(options={{'reset_mask': ...}}) needs autoreset_mode=AutoresetMode.DISABLED; "
                    f"this export uses {self.autoreset_mode}."
                )
            mask = checked_mask("reset(options={'reset_mask': ...})", mask, self.num_envs)
            ts = self._runner.reset_where(mask)  # the env's own reset(where=); how envs restart: native/auto_reset.py
            self._obs = _merge(mask, ts.obs, self._obs)
            return self._obs, ts.info
        ts = self._runner.reset(seed)
        self._pending[:] = False
        self._obs = ts.obs
        return ts.obs, ts.info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        ts = self._runner.step(actions)
        reached = TARGET.final_obs(self.env.id, ts)
        terminated, truncated, reward = ts.terminated, ts.truncated, ts.reward
        done = terminated | truncated
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            info = dict(ts.info)
            if done.any():
                final = np.empty(self.num_envs, dtype=object)
                for i in np.flatnonzero(done):
                    final[i] = jax.tree.map(lambda x, i=i: x[i], reached)
                info.update(final_obs=final, _final_obs=done, final_info=dict(ts.info), _final_info=done)
            return ts.obs, reward, terminated, truncated, info
        obs, info = reached, dict(ts.info)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP and self._pending.any():
            pending = self._pending.copy()
            restart = self._runner.reset_where(pending)  # the env's own reset(where=), as above; their step is dropped
            obs = _merge(pending, restart.obs, obs)
            if set(restart.info) == set(info):
                info = _merge(pending, restart.info, info)  # theirs: the new episode's first info
            reward = np.where(pending, np.zeros_like(reward), reward)
            terminated, truncated = terminated & ~pending, truncated & ~pending
            done = terminated | truncated
        self._pending = done
        self._obs = obs
        return obs, reward, terminated, truncated, info

    def render(self) -> Any:
        return self._runner.render() if "rgb_array" in self.metadata["render_modes"] else None

    def close(self, **kwargs: Any) -> None:
        """gymnasium's close; the envhub env stays open unless the export made it (``envhub.interop.contract``)."""
        gymnasium.vector.VectorEnv.close(self, **kwargs)

    def close_extras(self, **kwargs: Any) -> None:
        Exported.close(self)


__all__ = ["TARGET", "EnvhubVectorEnv", "parse_autoreset_mode", "to_gymnasium_vector"]
