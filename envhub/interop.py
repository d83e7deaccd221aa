"""Interop: envhub environments as gymnasium environments, and users' own env objects as envhub ones.

gymnasium, gymnax and brax are imported inside the functions that need them, never by ``import
envhub``. The gymnasium adapters jit ``step``/``reset`` once (NumPy in, NumPy out), since their
callers are Python loops.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import numpy as np

from envhub.env import Environment
from envhub.errors import InvalidArgumentError
from envhub.gymnasium_spaces import to_gymnasium_space


def _to_numpy(tree: Any) -> Any:
    return jax.tree.map(np.asarray, tree)


def to_gymnasium(env: Environment[Any, Any, Any], seed: int = 0) -> Any:
    """Expose an unbatched envhub env as a ``gymnasium.Env`` (no auto-reset: call ``reset`` at the end).

    At an episode end, ``step`` returns the observation reached (envhub's ``final_obs``).
    """
    if env.num_envs is not None:
        raise InvalidArgumentError(
            f"to_gymnasium needs an unbatched env; {env.id!r} has num_envs={env.num_envs}: use to_gymnasium_vector."
        )
    return _gymnasium_classes()[0](env, seed)


def to_gymnasium_vector(env: Environment[Any, Any, Any], seed: int = 0) -> Any:
    """Expose a batched envhub env as a ``gymnasium.vector.VectorEnv`` with same-step auto-reset.

    As gymnasium's ``AutoresetMode.SAME_STEP`` specifies, a step that ends an episode returns the
    new episode's first observation, and ``info["final_obs"]`` (object array, ``None`` elsewhere)
    with mask ``info["_final_obs"]`` holds the observation reached.
    """
    if env.num_envs is None:
        raise InvalidArgumentError(f"to_gymnasium_vector needs a batched env; make {env.id!r} with num_envs=N.")
    return _gymnasium_classes()[1](env, seed)


class _Driver:
    """The envhub side of both adapters: the env, a key stream, and jitted init/step."""

    def _drive(self, env: Environment[Any, Any, Any], seed: int) -> None:
        self.env = env
        self._key = jax.random.key(seed)
        self._init = jax.jit(env.init)
        self._jit_step = jax.jit(env.step)
        self._state: Any = None

    def _next_key(self) -> jax.Array:
        self._key, key = jax.random.split(self._key)
        return key

    def _start(self, seed: int | None) -> Any:
        if seed is not None:
            self._key = jax.random.key(seed)
        self._state, ts = self._init(self._next_key())
        return ts

    def _advance(self, action: Any) -> Any:
        if self._state is None:
            raise RuntimeError("Call reset() before step().")
        self._state, ts = self._jit_step(self._next_key(), self._state, action)
        return ts


@functools.cache
def _gymnasium_classes() -> tuple[type, type]:
    import gymnasium

    class EnvhubEnv(_Driver, gymnasium.Env):  # type: ignore[type-arg]
        """An unbatched envhub environment behind gymnasium's ``Env`` API."""

        metadata: dict[str, Any] = {"render_modes": []}

        def __init__(self, env: Environment[Any, Any, Any], seed: int):
            self._drive(env, seed)
            self.observation_space = to_gymnasium_space(env.observation_space)
            self.action_space = to_gymnasium_space(env.action_space)

        def reset(
            self, *, seed: int | None = None, options: dict[str, Any] | None = None
        ) -> tuple[Any, dict[str, Any]]:
            super().reset(seed=seed)
            ts = self._start(seed)
            return _to_numpy(ts.obs), _to_numpy(ts.info)

        def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
            ts = self._advance(action)
            return (
                _to_numpy(ts.final_obs),
                float(ts.reward),
                bool(ts.terminated),
                bool(ts.truncated),
                _to_numpy(ts.info),
            )

        def close(self) -> None:
            self.env.close()

    class EnvhubVectorEnv(_Driver, gymnasium.vector.VectorEnv):  # type: ignore[type-arg]
        """A batched envhub environment behind gymnasium's ``VectorEnv`` API (same-step auto-reset)."""

        def __init__(self, env: Environment[Any, Any, Any], seed: int):
            assert env.num_envs is not None
            self._drive(env, seed)
            self.num_envs = env.num_envs
            self.single_observation_space = to_gymnasium_space(env.single_observation_space)
            self.single_action_space = to_gymnasium_space(env.single_action_space)
            self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
            self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
            self.metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}

        def reset(
            self, *, seed: int | None = None, options: dict[str, Any] | None = None
        ) -> tuple[Any, dict[str, Any]]:
            ts = self._start(seed)
            return _to_numpy(ts.obs), _to_numpy(ts.info)

        def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
            ts = _to_numpy(self._advance(actions))
            done = ts.terminated | ts.truncated
            final = np.empty(self.num_envs, dtype=object)
            for i in np.flatnonzero(done):
                final[i] = jax.tree.map(lambda x, i=i: x[i], ts.final_obs)
            info = {**ts.info, "final_obs": final, "_final_obs": done}
            return ts.obs, ts.reward, ts.terminated, ts.truncated, info

        def close_extras(self, **kwargs: Any) -> None:
            self.env.close()

    return EnvhubEnv, EnvhubVectorEnv


def from_gymnax(env: Any, params: Any = None) -> Environment[Any, Any, Any]:
    """Wrap your own gymnax environment *object* (and optional ``EnvParams``) as an envhub env."""
    return _wrap_object("gymnax", env, params=params)


def from_brax(env: Any, **kwargs: Any) -> Environment[Any, Any, Any]:
    """Wrap your own brax environment *object* as an envhub env (``episode_length``, ``reset_mode``,
    ``num_envs`` as for ``envhub.make("brax/...")``); no brax wrapper is stacked on it."""
    return _wrap_object("brax", env, **kwargs)


def _wrap_object(prefix: str, env: Any, **kwargs: Any) -> Environment[Any, Any, Any]:
    """The backend ``prefix``'s ``wrap_object(env, **kwargs)``, found through the registry (core imports no plugin)."""
    from envhub.api import default_registry
    from envhub.errors import InvalidArgumentError

    wrap = getattr(default_registry().plugin(prefix), "wrap_object", None)
    if wrap is None:
        raise InvalidArgumentError(f"backend {prefix!r} has no wrap_object(env, ...); it cannot wrap your own objects.")
    return wrap(env, **kwargs)


__all__ = ["from_brax", "from_gymnax", "to_gymnasium", "to_gymnasium_space", "to_gymnasium_vector"]
