"""``to_sb3_vec_env``: a batched envhub env as a Stable-Baselines3 ``VecEnv`` (install ``envhub[sb3]``).

All N envs step in one compiled call (``compiled.Runner``). envhub's same-step auto-reset is SB3's
convention: a finished env's ``obs`` is already the next episode's first, and its info holds
``terminal_observation`` (the observation reached) and ``TimeLimit.truncated`` (truncated, not
terminated); ``reset_infos`` holds each env's reset info.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.core.arguments import an_environment, single_agent_only
from envhub.core.env import Environment
from envhub.errors import InvalidArgumentError, MissingDependencyError
from envhub.host.gymnasium_spaces import to_gymnasium_space
from envhub.interop.compiled import Runner
from envhub.registry.plugin_api import compatible_core_range

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as exc:  # pragma: no cover - exercised when SB3 is absent
    line = f'pip install "envhub[sb3]{compatible_core_range()}"'  # with the range: never PyPI's unrelated envhub 1.x
    raise MissingDependencyError("envhub.interop.sb3", "stable-baselines3", line) from exc


def _per_env(tree: Any, i: int) -> Any:
    return jax.tree.map(lambda x: x[i], tree)


class EnvhubVecEnv(VecEnv):  # type: ignore[misc,unused-ignore]
    """A batched envhub env behind SB3's ``VecEnv`` API (``step_async``/``step_wait``, list infos)."""

    def __init__(self, env: Environment[Any, Any, Any], seed: int = 0):
        assert env.num_envs is not None
        self.env, self._seed = env, seed
        self._runner = Runner(env, seed)
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
        reached = ts.obs if ts.final_obs is None else ts.final_obs
        infos = [_per_env(ts.info, i) for i in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = _per_env(reached, int(i))
            infos[i]["TimeLimit.truncated"] = bool(ts.truncated[i] and not ts.terminated[i])
        return ts.obs, ts.reward.astype(np.float32), dones, infos

    def close(self) -> None:
        self.env.close()

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

    def __reduce__(self) -> Any:
        return to_sb3_vec_env, (self.env, self._seed)


def to_sb3_vec_env(env: Environment[Any, Any, Any], seed: int = 0) -> EnvhubVecEnv:
    """Expose a batched envhub env (``num_envs=N``) as an SB3 ``VecEnv``: one compiled call steps all N."""
    an_environment("to_sb3_vec_env", env)
    if env.num_envs is None:
        raise InvalidArgumentError(f"to_sb3_vec_env needs a batched env; make {env.id!r} with num_envs=N.")
    single_agent_only("to_sb3_vec_env", env, "Stable-Baselines3 trains one agent")
    return EnvhubVecEnv(env, seed)


__all__ = ["EnvhubVecEnv", "to_sb3_vec_env"]
