"""The ``Wrapper`` base class, ``WrapperState``, and the batching wrapper ``VmapEnvironment``."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import numpy as np

from envhub import spaces
from envhub.env import Environment
from envhub.tree import select
from envhub.types import TimeStep


@dataclasses.dataclass(frozen=True)
class WrapperState:
    """State of a stateful wrapper: the inner env's state plus the wrapper's own pytree."""

    inner: Any
    extra: Any


jax.tree_util.register_dataclass(WrapperState, data_fields=["inner", "extra"], meta_fields=[])


def batch_shape(env: Environment[Any, Any, Any]) -> tuple[int, ...]:
    """``()`` for one environment, ``(num_envs,)`` for a batch."""
    return () if env.num_envs is None else (env.num_envs,)


class Wrapper(Environment[Any, Any, Any]):
    """Delegate everything to ``env``; subclasses override what they change."""

    #: ``True`` when this wrapper's state is ``WrapperState(inner, extra)`` (rendering unwraps it).
    wraps_state: bool = False

    def __init__(self, env: Environment[Any, Any, Any]):
        self.env = env

    def _init(self, key: jax.Array) -> tuple[Any, TimeStep[Any]]:
        return self.env.init(key)

    def _reset(self, key: jax.Array, state: Any) -> tuple[Any, TimeStep[Any]]:
        return self.env.reset(key, state)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        return self.env.step(key, state, action)

    def _reset_where(self, key: jax.Array, state: Any, where: jax.Array) -> tuple[Any, TimeStep[Any]]:
        return self.env.reset(key, state, where=where)

    def _render(self, state: Any, index: int | None) -> Any:
        return self.env.render(state.inner if self.wraps_state else state, index)

    def _render_html(self, states: Any, index: int) -> str:
        return self.env._render_html(states.inner if self.wraps_state else states, index)

    @property
    def render_modes(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.env.render_modes

    @property
    def metadata(self) -> dict[str, Any]:
        return self.env.metadata

    def _replace_observation_space(self, single: spaces.Space) -> None:
        """Declare the observation space of one environment; the batched one follows."""
        self.__dict__["_observation_spaces"] = (
            single,
            single if self.num_envs is None else single.batch(self.num_envs),
        )

    def _replace_action_space(self, single: spaces.Space) -> None:
        """Declare the action space of one environment; the batched one follows."""
        self.__dict__["_action_spaces"] = (single, single if self.num_envs is None else single.batch(self.num_envs))

    @property
    def action_space(self) -> spaces.Space:
        own = self.__dict__.get("_action_spaces")
        return own[1] if own else self.env.action_space

    @property
    def observation_space(self) -> spaces.Space:
        own = self.__dict__.get("_observation_spaces")
        return own[1] if own else self.env.observation_space

    @property
    def single_action_space(self) -> spaces.Space:
        own = self.__dict__.get("_action_spaces")
        return own[0] if own else self.env.single_action_space

    @property
    def single_observation_space(self) -> spaces.Space:
        own = self.__dict__.get("_observation_spaces")
        return own[0] if own else self.env.single_observation_space

    @property
    def id(self) -> str:  # type: ignore[override]
        return self.env.id

    @property
    def num_envs(self) -> int | None:  # type: ignore[override]
        return self.env.num_envs

    @property
    def is_jax_native(self) -> bool:  # type: ignore[override]
        return self.env.is_jax_native

    @property
    def closed(self) -> bool:
        return self.env.closed

    def close(self) -> None:
        self.env.close()

    @property
    def unwrapped(self) -> Environment[Any, Any, Any]:
        return self.env.unwrapped

    def __getattr__(self, name: str) -> Any:
        # Guard dunders so copy/pickle probing (__setstate__, ...) cannot recurse into `env`.
        if name.startswith("__") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}{self.env!r}>"


class TimeStepWrapper(Wrapper):
    """Base of stateless wrappers: ``_map(ts)`` is applied to the TimeStep of init, reset and step."""

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        raise NotImplementedError

    def _init(self, key: jax.Array) -> tuple[Any, TimeStep[Any]]:
        state, ts = self.env.init(key)
        return state, self._map(ts)

    def _reset(self, key: jax.Array, state: Any) -> tuple[Any, TimeStep[Any]]:
        state, ts = self.env.reset(key, state)
        return state, self._map(ts)

    def _reset_where(self, key: jax.Array, state: Any, where: jax.Array) -> tuple[Any, TimeStep[Any]]:
        state, ts = self.env.reset(key, state, where=where)
        return state, self._map(ts)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        state, ts = self.env.step(key, state, action)
        return state, self._map(ts)


class EpisodeStateWrapper(Wrapper):
    """Base of wrappers with per-environment state of their own that restarts with every episode.

    The state is ``WrapperState(inner, extra)``. Subclasses implement ``_episode_start(ts)`` (their
    ``extra`` at the start of an episode, from its first TimeStep) and ``_step``; ``_show_first(extra,
    ts)`` changes what a first TimeStep shows (default: nothing). init, reset and ``reset(where=)``
    (which restarts ``extra`` only where it resets) are written here, once.
    """

    wraps_state = True

    def _episode_start(self, ts: TimeStep[Any]) -> Any:
        raise NotImplementedError

    def _show_first(self, extra: Any, ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts

    def _started(self, inner: Any, ts: TimeStep[Any]) -> tuple[WrapperState, TimeStep[Any]]:
        extra = self._episode_start(ts)
        return WrapperState(inner, extra), self._show_first(extra, ts)

    def _init(self, key: jax.Array) -> tuple[WrapperState, TimeStep[Any]]:
        return self._started(*self.env.init(key))

    def _reset(self, key: jax.Array, state: WrapperState) -> tuple[WrapperState, TimeStep[Any]]:
        return self._started(*self.env.reset(key, state.inner))

    def _reset_where(self, key: jax.Array, state: WrapperState, where: jax.Array) -> tuple[WrapperState, TimeStep[Any]]:
        inner, ts = self.env.reset(key, state.inner, where=where)
        extra = select(where, self._episode_start(ts), state.extra)
        return WrapperState(inner, extra), self._show_first(extra, ts)


class VmapEnvironment(Wrapper):
    """Batch a JAX-native environment: one key in, ``num_envs`` keys split inside, vmap over all."""

    def __init__(self, env: Environment[Any, Any, Any], num_envs: int):
        if not env.is_jax_native:
            raise TypeError(f"{env.id!r} is not JAX-native; its backend must batch it with num_envs itself.")
        super().__init__(env)
        self._num_envs = num_envs
        self._action_space = env.action_space.batch(num_envs)
        self._observation_space = env.observation_space.batch(num_envs)

    @property
    def num_envs(self) -> int:  # type: ignore[override]
        return self._num_envs

    def _init(self, key: jax.Array) -> tuple[Any, TimeStep[Any]]:
        return jax.vmap(self.env.init)(jax.random.split(key, self._num_envs))

    def _reset(self, key: jax.Array, state: Any) -> tuple[Any, TimeStep[Any]]:
        return jax.vmap(self.env.reset)(jax.random.split(key, self._num_envs), state)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        return jax.vmap(self.env.step)(jax.random.split(key, self._num_envs), state, action)

    def _render(self, state: Any, index: int | None) -> Any:
        if index is not None:
            return self.env.render(jax.tree.map(lambda x: x[index], state))
        return np.stack([self.env.render(jax.tree.map(lambda x, i=i: x[i], state)) for i in range(self._num_envs)])

    def _render_html(self, states: Any, index: int) -> str:
        return self.env._render_html(jax.tree.map(lambda x: x[:, index], states), 0)

    def _reset_where(self, key: jax.Array, state: Any, where: jax.Array) -> tuple[Any, TimeStep[Any]]:
        def reset_one(k: jax.Array, s: Any, w: jax.Array) -> tuple[Any, TimeStep[Any]]:
            return self.env.reset(k, s, where=w)

        return jax.vmap(reset_one)(jax.random.split(key, self._num_envs), state, where)

    @property
    def action_space(self) -> spaces.Space:
        return self._action_space

    @property
    def observation_space(self) -> spaces.Space:
        return self._observation_space
