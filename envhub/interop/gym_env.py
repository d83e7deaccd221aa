"""``to_gymnasium``: an unbatched single-agent envhub env as a ``gymnasium.Env`` (imports gymnasium).

JAX envs run through ``compiled.Runner`` (one compiled call per step). A host env that can hand out the gymnasium
env it runs (``gymnasium_env()``, e.g. ``gymnasium/...`` without wrappers) is stepped directly: no JAX round trip,
and the same meaning (at an episode end, the observation reached). The contract (refusals, final_obs, close,
pickling) is ``envhub.interop.contract``'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envhub.errors import ClosedEnvironmentError, InvalidArgumentError
from envhub.host.gymnasium_spaces import to_gymnasium_space
from envhub.interop.compiled import Runner
from envhub.interop.contract import Exported, Made, Target, library_missing
from envhub.interop.flags import drawn_modes

try:
    import gymnasium
except ImportError as exc:  # pragma: no cover - exercised when it is absent
    raise library_missing("to_gymnasium", "gymnasium", "gymnasium") from exc

FIXES = {"batched": " (for a batch: to_gymnasium_vector)", "multi-agent": "gymnasium.Env is single-agent"}
TARGET = Target("to_gymnasium", "gymnasium", batched=False, reached="step's obs at the end", fixes=FIXES)


def to_gymnasium(env: Any, seed: int = 0, render_mode: str | None = None) -> EnvhubEnv:
    """Expose an unbatched single-agent envhub env as a ``gymnasium.Env`` (no auto-reset: call ``reset`` at the end).

    At an episode end, ``step`` returns the observation reached (envhub's ``final_obs``); outputs are writable NumPy
    arrays; ``render_mode="rgb_array"`` where the env draws. It pickles as this call (the env by its make id).

    Raises:
        InvalidArgumentError: ``env`` is not an unbatched single-agent envhub env or drops ``final_obs``; ``seed``
            is no int from 0 to 2**63 - 1; ``render_mode`` is not one ``env`` draws.
        ClosedEnvironmentError: ``env`` is closed.
    """
    return EnvhubEnv(TARGET.check(env, seed=seed, render_mode=render_mode))


class EnvhubEnv(Exported, gymnasium.Env):  # type: ignore[type-arg]
    """An unbatched envhub env as a ``gymnasium.Env``, made by ``to_gymnasium``."""

    def __init__(self, made: Made):
        self.made, self.env = made, made.env
        self.metadata = {"render_modes": drawn_modes(self.env)}
        self.render_mode = made.flags["render_mode"]
        self.observation_space = to_gymnasium_space(self.env.observation_space)
        self.action_space = to_gymnasium_space(self.env.action_space)
        direct = getattr(self.env, "gymnasium_env", None) if self.env.unwrapped is self.env else None
        self._direct, self._host = direct, None  # the gymnasium env it steps directly: made on reset, its own
        self._runner = None if direct is not None else Runner(self.env, made.flags["seed"])
        flat = isinstance(self.action_space, (gymnasium.spaces.Box, gymnasium.spaces.Discrete))
        flat = flat or isinstance(self.action_space, gymnasium.spaces.MultiDiscrete)
        self._action_dtype: Any = self.action_space.dtype if flat else None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if self._direct is not None:
            if self._host is None:
                self._host = self._direct()
                seed = self.made.flags["seed"] if seed is None else seed
            return self._checked_host("reset").reset(seed=seed, options=options)
        assert self._runner is not None
        ts = self._runner.reset(seed)
        return ts.obs, ts.info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._direct is not None:
            return self._checked_host("step").step(action)
        assert self._runner is not None
        given = np.asarray(action).dtype if self._action_dtype is not None else None  # None: a Tree space
        if given is not None and given.kind != "b" and np.can_cast(given, self._action_dtype, "same_kind"):
            action = np.asarray(action, self._action_dtype)  # float64 from a policy; 1.7 or True is refused below
        ts = self._runner.step(action)
        obs = TARGET.final_obs(self.env.id, ts)
        return obs, float(ts.reward), bool(ts.terminated), bool(ts.truncated), ts.info

    def _checked_host(self, method: str) -> Any:
        if self.env.closed:
            raise ClosedEnvironmentError(self.env.id, method)
        if self._host is None:
            raise InvalidArgumentError(
                f"{method}() of the export of {self.env.id!r} before reset(): call reset() first."
            )
        return self._host

    def render(self) -> Any:
        if self._direct is None or self.render_mode != "rgb_array":
            return self.frame()
        return self._checked_host("render").render()

    def close(self) -> None:
        """Close the gymnasium env the export steps directly (it made it) and, where the export made the envhub env
        (``register_gymnasium``), that too; an env you gave it stays open (``envhub.interop.contract``)."""
        if self._host is not None:
            self._host.close()
            self._host = None
        super().close()


__all__ = ["TARGET", "EnvhubEnv", "to_gymnasium"]
