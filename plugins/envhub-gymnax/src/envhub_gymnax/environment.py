"""``GymnaxEnvironment``: a gymnax environment behind the envhub API."""

from __future__ import annotations

import dataclasses
import importlib.metadata
from typing import Any

import gymnax
import jax
import jax.numpy as jnp
import numpy as np
from gymnax.environments import spaces as gymnax_spaces

import envhub
from envhub import spaces
from envhub.types import TimeStep


def _unbounded(space: spaces.Space) -> spaces.Space:
    assert isinstance(space, spaces.Box)
    return spaces.Box(-np.inf, np.inf, space.shape, space.dtype)


def _same(space: spaces.Space) -> spaces.Space:
    return space


# gymnax environments whose declared observation space does not contain their observations
# (found by the conformance kit): GaussianBandit's Gaussian reward and MemoryChain's context bits
# leave the declared [0, high] box; their observation spaces are widened to unbounded Boxes.
SPACE_FIXES = {
    "GaussianBandit-misc": _unbounded,
    "MemoryChain-bsuite": _unbounded,
}

# Keys of gymnax's step info that TimeStep already carries as fields.
_MOVED_TO_TIMESTEP = ("final_observation", "terminated", "truncated")


class GymnaxEnvironment(envhub.Environment[Any, Any, Any]):
    """Wrap one gymnax environment; its own same-step auto-reset and ``final_observation`` are kept."""

    def __init__(self, name: str, params: Any = None, **kwargs: Any):
        # kwargs naming EnvParams fields update the params; the rest go to gymnax's constructor.
        gymnax_env, default_params = gymnax.make(name)
        field_names = {f.name for f in dataclasses.fields(default_params)}
        constructor_kwargs = {k: v for k, v in kwargs.items() if k not in field_names}
        if constructor_kwargs:
            gymnax_env, default_params = gymnax.make(name, **constructor_kwargs)
        base = params if params is not None else default_params
        params = base.replace(**{k: _like(getattr(base, k), v) for k, v in kwargs.items() if k in field_names})
        self._setup(name, gymnax_env, params)

    @classmethod
    def from_env(cls, gymnax_env: Any, params: Any = None) -> GymnaxEnvironment:
        """Wrap a gymnax environment object (yours, not only a registered one)."""
        env = cls.__new__(cls)
        env._setup(gymnax_env.name, gymnax_env, params if params is not None else gymnax_env.default_params)
        env.id = f"gymnax-object/{gymnax_env.name}"
        return env

    def _setup(self, name: str, gymnax_env: Any, params: Any) -> None:
        self.gymnax_env, self.params = gymnax_env, params
        self._action_space = to_envhub_space(gymnax_env.action_space(params))
        declared = to_envhub_space(gymnax_env.observation_space(params))
        obs_shapes = jax.eval_shape(lambda k: gymnax_env.reset(k, params)[0], jax.random.key(0))
        self._observation_space = SPACE_FIXES.get(name, _same)(match_dtypes(declared, obs_shapes))
        self._info_template: Any = None

    @property
    def render_modes(self) -> tuple[str, ...]:  # type: ignore[override]
        from envhub_gymnax.render import DRAWABLE

        return ("rgb_array",) if self.gymnax_env.name in DRAWABLE else ()

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            "time_limit": getattr(self.params, "max_steps_in_episode", None),
            "library": f"gymnax {importlib.metadata.version('gymnax')}",
        }

    def _render(self, state: Any, index: int | None) -> Any:
        from envhub_gymnax.render import draw

        if not self.render_modes:
            from envhub.errors import RenderError

            raise RenderError(
                self.id,
                f"gymnax's visualizer has no drawing for {self.gymnax_env.name!r}",
                "record its observations instead (gymnax draws classic control, MinAtar, Catch, mazes and PointRobot)",
            )
        return draw(self, jax.device_get(state))

    def _close(self) -> None:
        renderer = self.__dict__.pop("_gym_renderer", None)
        if renderer is not None:
            renderer.close()

    @property
    def action_space(self) -> spaces.Space:
        return self._action_space

    @property
    def observation_space(self) -> spaces.Space:
        return self._observation_space

    def _init(self, key: jax.Array) -> tuple[Any, TimeStep[Any]]:
        obs, state = self.gymnax_env.reset(key, self.params)
        state = jax.tree.map(_strong, state)  # some gymnax resets return weak-typed leaves; steps do not
        return state, TimeStep.first(obs, self._empty_info(key, state))

    def _reset(self, key: jax.Array, state: Any) -> tuple[Any, TimeStep[Any]]:
        return self._init(key)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        obs, state, reward, terminated, truncated, info = self.gymnax_env.step(key, state, action, self.params)
        state = jax.tree.map(_strong, state)  # some gymnax steps return weak-typed state leaves
        ts = TimeStep.transition(obs, reward, terminated, truncated, info["final_observation"], _public_info(info))
        return state, ts

    def _empty_info(self, key: jax.Array, state: Any) -> dict[str, Any]:
        """Zeros shaped like a step's info, so init/reset/step share one pytree structure."""
        if self._info_template is None:
            action = self._action_space.sample(jax.random.key(0))
            shapes = jax.eval_shape(lambda k, s, a: self._step(k, s, a)[1].info, key, state, action)
            self._info_template = shapes
        return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), self._info_template)


def _like(default: Any, value: Any) -> Any:
    """Give ``value`` the type of the field's default (gymnax breaks on an int where it has 100.0)."""
    if isinstance(default, (bool, int, float)) and isinstance(value, (bool, int, float)):
        return type(default)(value)
    if isinstance(default, (np.ndarray, jax.Array)):
        return jnp.asarray(value, dtype=default.dtype)
    return value


def _public_info(info: dict[str, Any]) -> dict[str, Any]:
    """Drop the keys TimeStep carries; strip weak types so the structure matches init's zeros."""
    return {k: _strong(v) for k, v in info.items() if k not in _MOVED_TO_TIMESTEP}


def _strong(x: Any) -> jax.Array:
    x = jnp.asarray(x)
    return x.astype(x.dtype)


def match_dtypes(space: spaces.Space, shapes: Any) -> spaces.Space:
    """Give Box leaves the dtype gymnax really returns (some declare int32 and return float32)."""
    if isinstance(space, spaces.Tree):
        leaves = space.treedef.flatten_up_to(shapes)
        return spaces.Tree(space.treedef.unflatten([match_dtypes(s, x) for s, x in zip(space.leaves, leaves)]))
    if isinstance(space, spaces.Box) and space.dtype != shapes.dtype and space.shape == shapes.shape:
        return spaces.Box(space.low, space.high, space.shape, shapes.dtype)
    return space


def to_envhub_space(space: Any) -> spaces.Space:
    """Convert a gymnax space (Discrete, Box, Dict, Tuple) to an envhub space."""
    if isinstance(space, gymnax_spaces.Discrete):
        return spaces.Discrete(space.n, dtype=space.dtype)
    if isinstance(space, gymnax_spaces.Box):
        return spaces.Box(np.asarray(space.low), np.asarray(space.high), tuple(space.shape), np.dtype(space.dtype))
    if isinstance(space, gymnax_spaces.Dict):
        return spaces.Tree({k: to_envhub_space(v) for k, v in space.spaces.items()})
    if isinstance(space, gymnax_spaces.Tuple):
        return spaces.Tree(tuple(to_envhub_space(v) for v in space.spaces))
    raise TypeError(f"envhub-gymnax cannot convert gymnax space {space!r} of type {type(space).__name__}.")
