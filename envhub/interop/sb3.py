"""``to_sb3_vec_env``: a batched envhub env as a Stable-Baselines3 ``VecEnv`` (install ``envhub[sb3]``).

All N envs step in one compiled call (``compiled.Runner``). envhub's same-step auto-reset is SB3's
convention: a finished env's ``obs`` is already the next episode's first, and its info holds
``terminal_observation`` (the observation reached) and ``TimeLimit.truncated`` (truncated, not
terminated); ``reset_infos`` holds each env's reset info. The contract (refusals, final_obs, close, pickling) is
``envhub.interop.contract``'s.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.errors import InvalidArgumentError
from envhub.host.gymnasium_spaces import to_gymnasium_space
from envhub.interop.compiled import Runner
from envhub.interop.contract import Exported, Made, Target, library_missing

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - exercised when SB3 is absent
    raise library_missing("to_sb3_vec_env", "stable-baselines3", "sb3") from exc

FIXES = {"multi-agent": "Stable-Baselines3 trains one agent"}
TARGET = Target("to_sb3_vec_env", "Stable-Baselines3", batched=True, reached="terminal_observation", fixes=FIXES)


def to_sb3_vec_env(env: Any, seed: int = 0) -> EnvhubVecEnv:
    """Expose a batched single-agent envhub env (``num_envs=N``) as an SB3 ``VecEnv``: one compiled call steps all N.

    Raises:
        InvalidArgumentError: ``env`` is not a batched single-agent envhub env or drops ``final_obs``; ``seed`` is no
            int from 0 to 2**63 - 1.
        ClosedEnvironmentError: ``env`` is closed.
    """
    return EnvhubVecEnv(TARGET.check(env, seed=seed))


def _per_env(tree: Any, i: int) -> Any:
    return jax.tree.map(lambda x: x[i], tree)


class EnvhubVecEnv(Exported, VecEnv):  # type: ignore[misc,unused-ignore]
    """A batched envhub env behind SB3's ``VecEnv`` API (``step_async``/``step_wait``, list infos), made by
    ``to_sb3_vec_env``."""

    def __init__(self, made: Made):
        self.made = made
        self.env = env = made.env
        assert env.num_envs is not None
        self._runner = Runner(env, made.flags["seed"])
        render_mode = "rgb_array" if "rgb_array" in env.render_modes else None
        super().__init__(
            env.num_envs,
            to_gymnasium_space(env.single_observation_space),
            to_gymnasium_space(env.single_action_space),
        )
        self.render_mode = render_mode
        self._actions: Any = None

    def reset(self) -> Any:
        seed = self._seeds[0]  # VecEnv.seed(s) gives env i the seed s + i: one key stream from s here
        ts = self._runner.reset(seed if seed is not None else None)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [_per_env(ts.info, i) for i in range(self.num_envs)]
        return ts.obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        ts = self._runner.step(self._actions)
        dones = ts.terminated | ts.truncated
        reached = TARGET.final_obs(self.env.id, ts)
        infos = [_per_env(ts.info, i) for i in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = _per_env(reached, int(i))
            infos[i]["TimeLimit.truncated"] = bool(ts.truncated[i] and not ts.terminated[i])
        return ts.obs, ts.reward.astype(np.float32), dones, infos

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self.env, attr_name)] * len(list(self._get_indices(indices)))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        raise InvalidArgumentError(f"set_attr({attr_name!r}): an envhub env's attributes are fixed when it is made.")

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        raise InvalidArgumentError(
            f"env_method({method_name!r}): envhub envs are functional; call it on the envhub env (.env) instead."
        )

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [self.env.has_wrapper(wrapper_class)] * len(list(self._get_indices(indices)))

    def get_images(self) -> list[np.ndarray]:
        frames = self._runner.render()
        return list(frames)


__all__ = ["TARGET", "EnvhubVecEnv", "to_sb3_vec_env"]
