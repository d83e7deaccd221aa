"""``EnvhubEnv``: an unbatched envhub env behind gymnasium's ``Env`` API (imports gymnasium).

JAX envs run through ``compiled.Runner`` (one compiled call per step). A host env that can hand out
the gymnasium env it runs (``gymnasium_env()``, e.g. ``gymnasium/...`` without wrappers) is stepped
directly: no JAX round trip, and the same meaning (at an episode end, the observation reached).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from envhub.core.env import Environment
from envhub.host.gymnasium_spaces import to_gymnasium_space
from envhub.interop.compiled import Runner, drawn_modes


class EnvhubEnv(gymnasium.Env):  # type: ignore[type-arg]
    """An unbatched envhub env as a ``gymnasium.Env`` (no auto-reset: call ``reset`` at an episode end).

    ``step`` returns writable NumPy arrays; at an episode end the observation reached (envhub's
    ``final_obs``). Pickles as ``to_gymnasium(env, seed, render_mode)`` (the env by its make id).
    """

    def __init__(self, env: Environment[Any, Any, Any], seed: int = 0, render_mode: str | None = None):
        self.env, self._seed = env, seed
        self.metadata = {"render_modes": drawn_modes(env)}
        self.render_mode = render_mode
        self.observation_space = to_gymnasium_space(env.observation_space)
        self.action_space = to_gymnasium_space(env.action_space)
        direct = getattr(env, "gymnasium_env", None) if env.unwrapped is env else None
        self._host: Any = direct() if direct is not None else None
        self._runner = None if self._host is not None else Runner(env, seed)
        flat = isinstance(self.action_space, (gymnasium.spaces.Box, gymnasium.spaces.Discrete))
        flat = flat or isinstance(self.action_space, gymnasium.spaces.MultiDiscrete)
        self._action_dtype = self.action_space.dtype if flat else None
        if self._host is not None:
            self._host.reset(seed=seed)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if self._host is not None:
            return self._host.reset(seed=seed, options=options)
        assert self._runner is not None
        ts = self._runner.reset(seed)
        return ts.obs, ts.info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._host is not None:
            return self._host.step(action)
        assert self._runner is not None
        given = np.asarray(action).dtype if self._action_dtype is not None else None  # None: a Tree space
        if given is not None and given.kind != "b" and np.can_cast(given, self._action_dtype, "same_kind"):
            action = np.asarray(action, self._action_dtype)  # float64 from a policy; 1.7 or True is refused below
        ts = self._runner.step(action)
        obs = ts.obs if ts.final_obs is None else ts.final_obs
        return obs, float(ts.reward), bool(ts.terminated), bool(ts.truncated), ts.info

    def render(self) -> Any:
        if self.render_mode != "rgb_array":
            return None
        if self._host is not None:
            return self._host.render()
        assert self._runner is not None
        return self._runner.render()

    def close(self) -> None:
        if self._host is not None:
            self._host.close()
        self.env.close()

    def __reduce__(self) -> Any:
        return type(self), (self.env, self._seed, self.render_mode)


__all__ = ["EnvhubEnv"]
