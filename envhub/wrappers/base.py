"""The wrapper bases: ``Wrapper``, ``TimeStepWrapper``, ``StatefulWrapper``, and ``WrapperState``.

Which to subclass: ``TimeStepWrapper`` when a wrapper only changes the TimeStep, ``StatefulWrapper``
when it keeps state of its own, ``Wrapper`` for anything else (it delegates everything).
"""

from __future__ import annotations

import dataclasses
from typing import Any, overload

import jax

from envhub import spaces
from envhub.core.env import Environment
from envhub.core.tree import select
from envhub.core.types import TimeStep
from envhub.errors import InvalidArgumentError


@dataclasses.dataclass(frozen=True)
class WrapperState:
    """State of a stateful wrapper: ``env_state`` (the wrapped env's state) and ``wrapper_state`` (its own)."""

    env_state: Any
    wrapper_state: Any


jax.tree_util.register_dataclass(WrapperState, data_fields=["env_state", "wrapper_state"], meta_fields=[])


def batch_shape(env: Environment[Any, Any, Any]) -> tuple[int, ...]:
    """``()`` for one environment, ``(num_envs,)`` for a batch."""
    return () if env.num_envs is None else (env.num_envs,)


class _SpaceOf:
    """A space attribute of a wrapper: the one it declared with ``_replace_space``, else its env's."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, wrapper: None, owner: type) -> _SpaceOf: ...
    @overload
    def __get__(self, wrapper: Wrapper, owner: type | None = None) -> spaces.Space: ...
    def __get__(self, wrapper: Wrapper | None, owner: type | None = None) -> spaces.Space | _SpaceOf:
        if wrapper is None:  # looked up on the class
            return self
        own = wrapper.__dict__.get("_own_spaces", {}).get(self.name)
        return own if own is not None else getattr(wrapper.env, self.name)


class Wrapper(Environment[Any, Any, Any]):
    """Delegate everything to ``env``; subclasses override what they change."""

    #: ``True`` when this wrapper's state is a ``WrapperState`` (rendering unwraps it).
    wraps_state: bool = False

    #: pickled as its fields (``envhub.core.pickling``): its env, and its functions if module-level
    _pickle_fields = True

    def __init__(self, env: Environment[Any, Any, Any]):
        self.env = env
        self._own_spaces: dict[str, spaces.Space] = {}

    # --- the one rule for a state given to a wrapper (every wrapper, stateful or not, through these four) ---

    def reset(
        self, key: jax.Array, state: Any, where: jax.Array | None = None, params: Any = None
    ) -> tuple[Any, TimeStep[Any]]:
        return super().reset(key, self._own_state("reset", state), where=where, params=params)

    def step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        return super().step(key, self._own_state("step", state), action)

    def set_params(self, state: Any, params: Any, where: jax.Array | None = None) -> Any:
        return super().set_params(self._own_state("set_params", state), params, where)

    def render(self, state: Any, index: int | None = None) -> Any:
        return super().render(self._own_state("render", state), index)

    def _own_state(self, method: str, state: Any) -> Any:
        """``state`` if it has as many ``WrapperState`` layers as this chain has stateful wrappers (one each; the
        innermost env checks its own state), else ``InvalidArgumentError``, the class an env raises for a wrong state.
        Checked before any work (while tracing too), so a refused call changes nothing."""
        want, have = _layers(self), _depth(state)
        if have == want:
            return state
        self._check_open(method)  # a closed env says so first
        names = [type(e).__name__ for e in _chain(self) if getattr(e, "wraps_state", False)]
        own = f"a WrapperState per stateful wrapper ({' > '.join(names)})" if names else "its innermost env's state"
        if have < want:
            pair = isinstance(state, tuple) and len(state) == 2 and _depth(state[0]) == want
            inner = next(e for e in _chain(self) if _layers(e) == have)
            passed = (
                "a (state, ts) pair (pass its first item)"
                if pair
                else f"a {type(state).__name__}, the state of {inner!r}"
            )
        else:
            passed = f"a state of {have} WrapperState layers, the state of a wrapper around it"
        raise InvalidArgumentError(
            f"{type(self).__name__}.{method} of {self.id!r} was given {passed}, where its own state is {own}; "
            f"pass the state returned by this wrapper's init, reset or step."
        )

    def _init(self, key: jax.Array, params: Any = None) -> tuple[Any, TimeStep[Any]]:
        return self.env.init(key, params=params)

    def _reset(self, key: jax.Array, state: Any, params: Any = None) -> tuple[Any, TimeStep[Any]]:
        return self.env.reset(key, state, params=params)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        return self.env.step(key, state, action)

    def _reset_where(
        self, key: jax.Array, state: Any, where: jax.Array, params: Any = None
    ) -> tuple[Any, TimeStep[Any]]:
        return self.env.reset(key, state, where=where, params=params)

    @property
    def default_params(self) -> Any:
        return self.env.default_params

    @property
    def params_bounds(self) -> Any:
        return self.env.params_bounds

    def _set_params(self, state: Any, params: Any, where: jax.Array | None) -> Any:
        if not self.wraps_state:
            return self.env.set_params(state, params, where)
        return dataclasses.replace(state, env_state=self.env.set_params(state.env_state, params, where))

    def _render(self, state: Any, index: int | None) -> Any:
        return self.env.render(state.env_state if self.wraps_state else state, index)

    def _render_html(self, states: Any, index: int) -> str:
        return self.env._render_html(states.env_state if self.wraps_state else states, index)

    @property
    def render_modes(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.env.render_modes

    @property
    def metadata(self) -> dict[str, Any]:
        return self.env.metadata

    def _replace_space(self, kind: str, single: spaces.Space) -> None:
        """Declare this wrapper's ``"observation"`` or ``"action"`` space of one env; the batched one follows."""
        self._own_spaces[f"single_{kind}_space"] = single
        self._own_spaces[f"{kind}_space"] = single if self.num_envs is None else single.batch(self.num_envs)

    action_space = _SpaceOf()
    observation_space = _SpaceOf()
    single_action_space = _SpaceOf()
    single_observation_space = _SpaceOf()

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
    def agents(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.env.agents

    @property
    def closed(self) -> bool:
        return self.env.closed

    def close(self) -> None:
        self.env.close()

    @property
    def unwrapped(self) -> Environment[Any, Any, Any]:
        return self.env.unwrapped

    def __getattr__(self, name: str) -> Any:
        # Guard dunders and the wrapper's own attributes so copy/pickle probing cannot recurse into `env`.
        if name.startswith("__") or name in ("env", "_own_spaces"):
            raise AttributeError(name)
        return getattr(self.env, name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}{self.env!r}>"


def _chain(env: Any) -> list[Any]:
    """``env`` and the wrappers inside it, outermost first, down to the innermost env."""
    envs = [env]
    while isinstance(envs[-1], Wrapper):
        envs.append(envs[-1].env)
    return envs


def _layers(env: Any) -> int:
    """How many ``WrapperState`` layers ``env``'s states have: one per stateful wrapper in its chain."""
    return sum(1 for e in _chain(env) if getattr(e, "wraps_state", False))


def _depth(state: Any) -> int:
    """How many ``WrapperState`` layers ``state`` has (a backend's own state has none)."""
    depth = 0
    while isinstance(state, WrapperState):
        state, depth = state.env_state, depth + 1
    return depth


class TimeStepWrapper(Wrapper):
    """Base of stateless wrappers: ``_map(ts)`` is applied to the TimeStep of init, reset and step."""

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        raise NotImplementedError

    def _init(self, key: jax.Array, params: Any = None) -> tuple[Any, TimeStep[Any]]:
        state, ts = self.env.init(key, params=params)
        return state, self._map(ts)

    def _reset(self, key: jax.Array, state: Any, params: Any = None) -> tuple[Any, TimeStep[Any]]:
        state, ts = self.env.reset(key, state, params=params)
        return state, self._map(ts)

    def _reset_where(
        self, key: jax.Array, state: Any, where: jax.Array, params: Any = None
    ) -> tuple[Any, TimeStep[Any]]:
        state, ts = self.env.reset(key, state, where=where, params=params)
        return state, self._map(ts)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        state, ts = self.env.step(key, state, action)
        return state, self._map(ts)


class StatefulWrapper(Wrapper):
    """Base of every wrapper with state of its own: ``WrapperState(env_state, wrapper_state)``.

    Subclasses implement ``_episode_start(ts)`` (their ``wrapper_state`` for an environment that
    starts an episode afresh, from its first TimeStep) and ``_step``. Optional: ``_show_first``
    changes what a first TimeStep shows; ``_restart`` decides what a reset keeps (by default
    nothing: the reset environments start afresh; statistics that outlive episodes override it).
    init, reset and ``reset(where=)`` are written here, once.
    """

    wraps_state = True

    def _episode_start(self, ts: TimeStep[Any]) -> Any:
        raise NotImplementedError

    def _restart(self, wrapper_state: Any, ts: TimeStep[Any], where: jax.Array | None) -> Any:
        """``wrapper_state`` after a reset of every environment (``where=None``) or of those in ``where``."""
        fresh = self._episode_start(ts)
        return fresh if where is None else select(where, fresh, wrapper_state)

    def _show_first(self, wrapper_state: Any, ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts

    def _started(self, env_state: Any, ts: TimeStep[Any], wrapper_state: Any) -> tuple[WrapperState, TimeStep[Any]]:
        return WrapperState(env_state, wrapper_state), self._show_first(wrapper_state, ts)

    def _init(self, key: jax.Array, params: Any = None) -> tuple[WrapperState, TimeStep[Any]]:
        env_state, ts = self.env.init(key, params=params)
        return self._started(env_state, ts, self._episode_start(ts))

    def _reset(self, key: jax.Array, state: WrapperState, params: Any = None) -> tuple[WrapperState, TimeStep[Any]]:
        env_state, ts = self.env.reset(key, state.env_state, params=params)
        return self._started(env_state, ts, self._restart(state.wrapper_state, ts, None))

    def _reset_where(
        self, key: jax.Array, state: WrapperState, where: jax.Array, params: Any = None
    ) -> tuple[WrapperState, TimeStep[Any]]:
        env_state, ts = self.env.reset(key, state.env_state, where=where, params=params)
        return self._started(env_state, ts, self._restart(state.wrapper_state, ts, where))


__all__ = ["StatefulWrapper", "TimeStepWrapper", "Wrapper", "WrapperState", "batch_shape"]
