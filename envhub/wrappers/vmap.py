"""``VmapEnvironment``: how ``envhub.make(..., num_envs=N)`` batches a JAX-native environment."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.core.arguments import positive_int
from envhub.core.env import Environment
from envhub.core.params import per_env
from envhub.core.types import TimeStep
from envhub.errors import InvalidArgumentError
from envhub.wrappers.base import Wrapper


class VmapEnvironment(Wrapper):
    """Batch a JAX-native environment: one key in, ``num_envs`` keys split inside, vmap over all."""

    def __init__(self, env: Environment[Any, Any, Any], num_envs: int):
        if not env.is_jax_native:
            raise InvalidArgumentError(
                f"{env.id!r} is not JAX-native, so VmapEnvironment cannot batch it; make it with num_envs=N "
                f"so that its backend batches it itself."
            )
        num_envs = positive_int("num_envs", num_envs, where="for VmapEnvironment")
        super().__init__(env)
        self._num_envs = num_envs
        self._replace_space("action", env.action_space)
        self._replace_space("observation", env.observation_space)

    @property
    def num_envs(self) -> int:  # type: ignore[override]
        return self._num_envs

    def _init(self, key: jax.Array, params: Any = None) -> tuple[Any, TimeStep[Any]]:
        init = lambda k, p: self.env.init(k, params=p)  # noqa: E731
        return jax.vmap(init)(jax.random.split(key, self._num_envs), self._per_env(params))

    def _reset(self, key: jax.Array, state: Any, params: Any = None) -> tuple[Any, TimeStep[Any]]:
        reset = lambda k, s, p: self.env.reset(k, s, params=p)  # noqa: E731
        state = self._batched(state, "reset")
        return jax.vmap(reset)(jax.random.split(key, self._num_envs), state, self._per_env(params))

    def _set_params(self, state: Any, params: Any, where: jax.Array | None) -> Any:
        state = self._batched(state, "set_params")
        if where is None:
            return jax.vmap(lambda s, p: self.env.set_params(s, p))(state, self._per_env(params))
        return jax.vmap(lambda s, p, w: self.env.set_params(s, p, w))(state, self._per_env(params), where)

    def _per_env(self, params: Any) -> Any:
        return None if params is None else per_env(self.env.default_params, params, self._num_envs)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        return jax.vmap(self.env.step)(jax.random.split(key, self._num_envs), self._batched(state, "step"), action)

    def _batched(self, state: Any, method: str) -> Any:
        """``state`` if every leaf leads with ``num_envs`` (else ``jax.vmap`` would fail with its own words)."""
        for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]:
            shape = np.shape(leaf)
            if shape[:1] != (self._num_envs,):
                raise InvalidArgumentError(
                    f"{method} of {self.id!r} (num_envs={self._num_envs}) was given a state whose "
                    f"state{jax.tree_util.keystr(path)} has shape {shape}, not leading with {self._num_envs}: a state "
                    f"of another env or num_envs; pass the state this env's own init, reset or step returned."
                )
        return state

    def _reset_where(
        self, key: jax.Array, state: Any, where: jax.Array, params: Any = None
    ) -> tuple[Any, TimeStep[Any]]:
        def reset_one(k: jax.Array, s: Any, w: jax.Array, p: Any) -> tuple[Any, TimeStep[Any]]:
            return self.env.reset(k, s, where=w, params=p)

        state = self._batched(state, "reset")
        return jax.vmap(reset_one)(jax.random.split(key, self._num_envs), state, where, self._per_env(params))

    def _render(self, state: Any, index: int | None) -> Any:
        if index is not None:
            return self.env.render(jax.tree.map(lambda x: x[index], state))
        return np.stack([self.env.render(jax.tree.map(lambda x, i=i: x[i], state)) for i in range(self._num_envs)])

    def _render_html(self, states: Any, index: int) -> str:
        return self.env._render_html(jax.tree.map(lambda x: x[:, index], states), 0)


__all__ = ["VmapEnvironment"]
