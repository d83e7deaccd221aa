"""``BraxEnvironment``: one brax environment (or a batch of them) behind the envhub API.

brax's own training wrappers are not used. This module does their work once, with envhub's meaning:
the step counter and time limit (``EpisodeWrapper``), the same-step auto-reset (``AutoResetWrapper``,
but with a fresh ``reset`` per episode, see ``resets.py``, and the reached observation kept in
``final_obs``) and the batch (``VmapWrapper``). Nothing is jitted here: the caller's ``jax.jit``
traces ``init``/``reset``/``step`` (brax run op by op takes seconds per call).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import os
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import envhub
from envhub import spaces
from envhub.tree import select
from envhub.types import TimeStep, truncated_unless_terminated
from envhub_brax import building, resets


def use_egl_when_headless() -> None:
    """Before mujoco is imported on Linux without a display, default ``MUJOCO_GL`` to EGL (off-screen rendering)."""
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if sys.platform.startswith("linux") and headless and "mujoco" not in sys.modules:
        os.environ.setdefault("MUJOCO_GL", "egl")


def import_brax_envs() -> Any:
    """Import ``brax.envs``; mujoco's optional-import notices go to stderr, keeping stdout clean.

    MuJoCo picks its OpenGL platform when first imported: without a display, EGL (unless ``MUJOCO_GL`` is set).
    """
    use_egl_when_headless()
    with contextlib.redirect_stdout(sys.stderr):
        from brax import envs
    return envs


@dataclasses.dataclass(frozen=True)
class BraxState:
    """The state of a brax environment (every leaf leads with ``num_envs`` when batched).

    Attributes:
        brax: brax's own ``brax.envs.State`` (``.pipeline_state`` is what rendering draws).
        steps: int32 steps taken in the current episode.
        first: ``reset_mode="cached"`` only: the brax state every episode restarts from; else ``None``.
        spares: ``reset_spares`` only: the spare initial states (``envhub_brax.resets.Spares``); else ``None``.
    """

    brax: Any
    steps: jax.Array
    first: Any = None
    spares: Any = None


jax.tree_util.register_dataclass(BraxState, data_fields=["brax", "steps", "first", "spares"], meta_fields=[])


class BraxEnvironment(envhub.Environment[BraxState, Any, jax.Array]):
    """A brax environment with a time limit, same-step auto-reset, and true truncation.

    Args:
        name: A name in brax's registry (``brax.envs.get_environment``).
        backend: brax's physics pipeline; ``None``: ``mjx`` where the environment supports it.
        episode_length: Steps after which an episode is truncated; ``None`` for no limit.
        reset_mode: ``"real"``: every episode starts from its own ``reset`` with its own key.
            ``"cached"``: every episode of an environment restarts from that environment's first
            state (brax's ``AutoResetWrapper`` behaviour, cheaper, but episodes repeat).
        reset_spares: ``num_envs=N`` with real resets: ``True`` (the default) keeps one spare
            initial state per environment, made ``N`` at a time when they run out (one batched reset
            per ``N`` episode ends; the state's memory doubles); ``False`` resets the finished
            environments on the step they end. See ``envhub_brax.resets``.
        num_envs: ``None`` for one environment, ``N`` for a batch of ``N``.
        **kwargs: brax's constructor arguments of that environment.
    """

    def __init__(
        self,
        name: str,
        *,
        backend: str | None = None,
        episode_length: int | None = 1000,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        num_envs: int | None = None,
        **kwargs: Any,
    ):
        building.check_arguments(name, backend, episode_length, reset_mode, reset_spares, num_envs, kwargs)
        brax_env = building.build(import_brax_envs(), name, backend, kwargs)
        self._setup(name, brax_env, episode_length, reset_mode, reset_spares, num_envs)

    @classmethod
    def from_env(
        cls,
        brax_env: Any,
        *,
        episode_length: int | None = 1000,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        num_envs: int | None = None,
    ) -> BraxEnvironment:
        """Wrap a brax environment object (yours, not only a registered one); no brax wrapper applied."""
        name = type(brax_env).__name__
        building.check_arguments(name, None, episode_length, reset_mode, reset_spares, num_envs, {})
        env = cls.__new__(cls)
        env._setup(name, brax_env, episode_length, reset_mode, reset_spares, num_envs)
        env.id = f"brax-object/{name}"
        return env

    def _setup(
        self,
        name: str,
        brax_env: Any,
        episode_length: int | None,
        reset_mode: str,
        reset_spares: bool | None,
        num_envs: int | None,
    ) -> None:
        self.name = name
        self.brax_env = brax_env
        self.episode_length = episode_length
        self.reset_mode = reset_mode
        self.num_envs = num_envs
        batched_real = num_envs is not None and reset_mode == "real"
        self.reset_spares = batched_real and reset_spares is not False
        obs = jax.eval_shape(self.brax_env.reset, jax.random.key(0)).obs
        self._single_observation_space = _obs_space(obs)
        self._single_action_space = spaces.Box(-1.0, 1.0, (self.brax_env.action_size,), np.float32)

    # --- spaces ------------------------------------------------------------------------------

    @property
    def single_action_space(self) -> spaces.Space:
        return self._single_action_space

    @property
    def single_observation_space(self) -> spaces.Space:
        return self._single_observation_space

    @property
    def action_space(self) -> spaces.Space:
        if self.num_envs is None:
            return self._single_action_space
        return self._single_action_space.batch(self.num_envs)

    @property
    def observation_space(self) -> spaces.Space:
        if self.num_envs is None:
            return self._single_observation_space
        return self._single_observation_space.batch(self.num_envs)

    render_modes = ("rgb_array", "html")

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            "time_limit": self.episode_length,
            "library": f"brax {importlib.metadata.version('brax')}",
            "pipeline": getattr(self.brax_env, "backend", None),
            "reset_mode": self.reset_mode,
            "reset_spares": self.reset_spares,
        }

    def _render(self, state: BraxState, index: int | None) -> Any:
        from envhub_brax.render import draw

        return draw(self, state, index)

    def _render_html(self, states: BraxState, index: int) -> str:
        from envhub_brax.render import render_html

        return render_html(self, states, index=index)

    def _close(self) -> None:
        renderer = self.__dict__.pop("_mj_renderer", None)
        if renderer is not None:
            renderer.close()

    @property
    def sys(self) -> Any:
        """brax's ``System`` of this environment (what brax's rendering needs)."""
        return self.brax_env.sys

    # --- one environment ---------------------------------------------------------------------

    def _brax_reset(self, key: jax.Array) -> Any:
        return _strong(self.brax_env.reset(key))

    def _brax_step(self, brax_state: Any, action: jax.Array) -> Any:
        # brax returns weak-typed reward/done (and info) from step but not from reset: cast them,
        # so (state, ts) has one structure and jit(step) compiles once.
        return _strong(self.brax_env.step(brax_state, action))

    def _flags(self, stepped: Any, steps: jax.Array) -> tuple[jax.Array, jax.Array]:
        terminated = stepped.done > 0
        if self.episode_length is None:
            return terminated, jnp.zeros_like(terminated)
        return terminated, truncated_unless_terminated(terminated, steps >= self.episode_length)

    def _first_timestep(self, brax_state: Any) -> TimeStep[Any]:
        batch = () if self.num_envs is None else (self.num_envs,)
        return TimeStep.first(brax_state.obs, _zeros(brax_state.metrics), batch)

    # --- envhub API --------------------------------------------------------------------------

    def _init(self, key: jax.Array) -> tuple[BraxState, TimeStep[Any]]:
        if self.num_envs is None:
            brax_state = self._brax_reset(key)
        else:
            brax_state = jax.vmap(self._brax_reset)(jax.random.split(key, self.num_envs))
        steps = jnp.zeros(jnp.shape(brax_state.reward), jnp.int32)
        first = brax_state if self.reset_mode == "cached" else None
        spares = resets.no_spares(brax_state) if self.reset_spares else None
        return BraxState(brax_state, steps, first, spares), self._first_timestep(brax_state)

    def _reset(self, key: jax.Array, state: BraxState) -> tuple[BraxState, TimeStep[Any]]:
        if self.reset_mode == "cached":
            return dataclasses.replace(
                state, brax=state.first, steps=jnp.zeros_like(state.steps)
            ), self._first_timestep(state.first)
        return self._init(key)

    def _reset_where(self, key: jax.Array, state: BraxState, where: jax.Array) -> tuple[BraxState, TimeStep[Any]]:
        new, ts = self._reset(key, state)  # the spares stay: they are still unused
        kept = dataclasses.replace(state, brax=select(where, new.brax, state.brax))
        return dataclasses.replace(kept, steps=jnp.where(where, 0, state.steps)), ts

    def _step(self, key: jax.Array, state: BraxState, action: jax.Array) -> tuple[BraxState, TimeStep[Any]]:
        if self.num_envs is None:
            stepped = self._brax_step(state.brax, action)
        else:
            stepped = jax.vmap(self._brax_step)(state.brax, action)
        steps = state.steps + 1
        terminated, truncated = self._flags(stepped, steps)
        done = jnp.logical_or(terminated, truncated)
        spares = state.spares
        if self.reset_mode == "cached":
            new = select(done, state.first, stepped)
        elif self.num_envs is None:
            # One environment: reset only when the episode ended (under jax.vmap this becomes a select).
            new = jax.lax.cond(done, lambda: self._brax_reset(key), lambda: stepped)
        elif self.reset_spares:
            new, spares = resets.reset_from_spares(self._brax_reset, key, done, stepped, spares)
        else:  # environment i resets with split(key, N)[i]
            new = resets.reset_done(self._brax_reset, jax.random.split(key, self.num_envs), done, stepped)
        ts = TimeStep(
            obs=new.obs,
            reward=stepped.reward.astype(jnp.float32),
            terminated=terminated,
            truncated=truncated,
            final_obs=stepped.obs,
            info=dict(stepped.metrics),
        )
        return BraxState(new, jnp.where(done, 0, steps), state.first, spares), ts


def _obs_space(obs: Any) -> spaces.Space:
    """Unbounded Boxes shaped like brax's observation (an array, or a dict of arrays)."""
    if isinstance(obs, dict):
        return spaces.Tree({k: _obs_space(v) for k, v in obs.items()})
    return spaces.Box(-np.inf, np.inf, tuple(obs.shape), np.dtype(obs.dtype))


def _strong(tree: Any) -> Any:
    return jax.tree.map(lambda x: jnp.asarray(x).astype(jnp.asarray(x).dtype), tree)


def _zeros(tree: Any) -> Any:
    return jax.tree.map(jnp.zeros_like, tree)
