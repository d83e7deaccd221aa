"""``GymnaxEnvironment``: a gymnax environment behind the envhub API."""

from __future__ import annotations

import dataclasses
import importlib.metadata
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import envhub
from envhub.plugin import JaxStep, draw_each, positive_int, spaces, take_time_limit
from envhub_gymnax import importing

gymnax_spaces = importing.import_alone("gymnax.environments.spaces")


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

# State fields that outlive an episode: bsuite's DeepSea keeps its cumulative metrics on reset
# (its own ``step`` carries them over; ``_restart_one`` does the same).
KEPT_ACROSS_RESETS = ("total_bad_episodes", "denoised_return")

# Keys of gymnax's step info that TimeStep already carries as fields.
_MOVED_TO_TIMESTEP = ("final_observation", "terminated", "truncated")


class GymnaxEnvironment(envhub.JaxEnvironment[Any, Any, Any]):
    """gymnax environments on envhub's JAX base: gymnax's ``reset_env``/``step_env`` with its own time
    limit (``is_truncated``). Unbatched, the same-step auto-reset splits keys as gymnax's ``step`` does,
    so trajectories equal gymnax's own; batched (``num_envs``), episodes that end restart from spare
    initial states by default (``reset_spares``), which costs a reset per ended episode, not per step; on a
    GPU or TPU, every env resets on every step and the finished ones keep theirs, as gymnax does (no branch)."""

    cheap_reset = True  # gymnax's own step computes a reset on every step

    def __init__(
        self,
        name: str,
        params: Any = None,
        *,
        num_envs: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        **kwargs: Any,
    ):
        # kwargs naming EnvParams fields update the params; the rest go to gymnax's constructor.
        self._batching = {"num_envs": num_envs, "reset_mode": reset_mode, "reset_spares": reset_spares}
        limit = take_time_limit(kwargs, "max_steps_in_episode", None)
        if limit is not None:  # gymnax takes 0 or -1 and truncates every step
            where = f"(gymnax's max_steps_in_episode) for gymnax/{name}"
            kwargs["max_steps_in_episode"] = positive_int("max_episode_steps", limit, where=where)
        gymnax_env, default_params = importing.make(name)
        field_names = {f.name for f in dataclasses.fields(default_params)}
        constructor_kwargs = {k: v for k, v in kwargs.items() if k not in field_names}
        if constructor_kwargs:
            gymnax_env, default_params = importing.make(name, **constructor_kwargs)
        base = params if params is not None else default_params
        params = base.replace(**{k: _like(getattr(base, k), v) for k, v in kwargs.items() if k in field_names})
        self._setup(name, gymnax_env, params)

    @classmethod
    def from_env(cls, gymnax_env: Any, params: Any = None) -> GymnaxEnvironment:
        """Wrap a gymnax environment object (yours, not only a registered one)."""
        env = cls.__new__(cls)
        env._batching = {}
        env._setup(gymnax_env.name, gymnax_env, params if params is not None else gymnax_env.default_params)
        env.id = f"gymnax-object/{gymnax_env.name}"
        return env

    def _setup(self, name: str, gymnax_env: Any, params: Any) -> None:
        self.gymnax_env, self.params = gymnax_env, params
        declared = to_envhub_space(gymnax_env.observation_space(params))
        obs_shapes, state_shapes = jax.eval_shape(lambda k: gymnax_env.reset(k, params), jax.random.key(0))
        if type(self) is GymnaxEnvironment and any(hasattr(state_shapes, f) for f in KEPT_ACROSS_RESETS):
            self.__class__ = GymnaxKeepingMetrics  # its restart keeps them, so the base gives it no spares
        super().__init__(  # no time limit of the base's: gymnax keeps its own (params.max_steps_in_episode)
            observation_space=SPACE_FIXES.get(name, _same)(match_dtypes(declared, obs_shapes)),
            action_space=to_envhub_space(gymnax_env.action_space(params)),
            **self._batching,
        )

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
            from envhub.plugin import RenderError

            raise RenderError(
                self.id,
                f"gymnax's visualizer has no drawing for {self.gymnax_env.name!r}",
                "record its observations instead (gymnax draws classic control, MinAtar, Catch, mazes and PointRobot)",
            )
        return draw_each(lambda one: draw(self, one), jax.device_get(state.env), self.num_envs, index)

    def _close(self) -> None:
        renderer = self.__dict__.pop("_gym_renderer", None)
        if renderer is not None:
            renderer.close()

    @property
    def default_params(self) -> Any:
        """gymnax's own ``EnvParams`` (with ``make``'s kwargs applied): pass changed copies to ``init``/``reset``."""
        return self.params

    @property
    def params_bounds(self) -> envhub.plugin.Bounds:
        """Masses, lengths and time steps are not negative (divisors > 0), probabilities in [0, 1], an episode lasts
        at least one step: ``envhub_gymnax.bounds`` (gymnax itself checks none)."""
        from envhub_gymnax.bounds import params_bounds

        return params_bounds(self.params)

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        obs, state = self.gymnax_env.reset_env(key, params)
        return state, obs

    def _step_one(self, key: jax.Array, state: Any, action: Any, params: Any) -> JaxStep:
        obs, state, reward, terminated, info = self.gymnax_env.step_env(key, state, action, params)
        truncated = self.gymnax_env.is_truncated(state, params)
        return JaxStep(
            state=state, obs=obs, reward=reward, terminated=terminated, truncated=truncated, info=_public_info(info)
        )


class GymnaxKeepingMetrics(GymnaxEnvironment):
    """A gymnax environment whose state keeps fields across episodes (``KEPT_ACROSS_RESETS``: bsuite's
    DeepSea): a restart carries them over, as gymnax's own ``step`` does. A restart then depends on the
    old state, so this one class gets no spare resets. ``GymnaxEnvironment`` becomes one when it sees
    such a state."""

    def _restart_one(self, key: jax.Array, state: Any, params: Any) -> tuple[Any, Any]:
        new, obs = self._reset_one(key, params)
        return new.replace(**{name: getattr(state, name) for name in KEPT_ACROSS_RESETS}), obs


def declared_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """``params``, the constructor's arguments, every ``EnvParams`` field and the time limit of gymnax ``name``."""
    gymnax_env, params = importing.make(name)
    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    limit = fields.pop("max_steps_in_episode", None)
    return {
        "params": envhub.Kwarg(type(params) | None, None, "gymnax EnvParams replacing the defaults"),
        **envhub.plugin.from_signature(type(gymnax_env))[0],
        **{k: envhub.Kwarg(envhub.plugin.infer_type(v), v, "gymnax EnvParams field") for k, v in fields.items()},
        **envhub.plugin.jax_kwargs(limit, native="max_steps_in_episode"),
    }


def _like(default: Any, value: Any) -> Any:
    """Give ``value`` the type of the field's default (gymnax breaks on an int where it has 100.0)."""
    if isinstance(default, (bool, int, float)) and isinstance(value, (bool, int, float)):
        return type(default)(value)
    if isinstance(default, (np.ndarray, jax.Array)):
        return jnp.asarray(value, dtype=default.dtype)
    return value


def _public_info(info: dict[str, Any]) -> dict[str, Any]:
    """Drop the keys TimeStep carries (gymnax's ``step`` adds them; ``step_env`` may too)."""
    return {k: v for k, v in info.items() if k not in _MOVED_TO_TIMESTEP}


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
