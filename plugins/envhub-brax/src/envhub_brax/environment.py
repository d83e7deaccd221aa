"""``BraxEnvironment``: one brax environment (or a batch of them) behind the envhub API.

brax's own training wrappers are not used: envhub's JAX base (``envhub.JaxEnvironment``) does their
work with envhub's meaning: the step counter and time limit (``EpisodeWrapper``), the same-step
auto-reset (``AutoResetWrapper``, but with a fresh ``reset`` per episode, see ``envhub.native.resets``, and
the reached observation kept in ``final_obs``) and the batch (``VmapWrapper``).
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import envhub
from envhub.plugin import JaxState, JaxStep, WithMjxParams, spaces, take_time_limit
from envhub_brax import building
from envhub_brax.params import system_params
from envhub_brax.quiet import quiet


class BraxEnvironment(WithMjxParams, envhub.JaxEnvironment[Any, Any, jax.Array]):
    """A brax environment on envhub's JAX base: time limit, same-step auto-reset, true truncation.

    Args:
        name: A name in brax's registry (``brax.envs.get_environment``).
        backend: brax's physics pipeline; ``None``: ``mjx`` where the environment supports it.
        max_episode_steps: Steps after which an episode is truncated (default 1000; ``None``: no
            limit). ``episode_length``, brax's name, is an alias.
        reset_mode, reset_spares, num_envs: see ``envhub.JaxEnvironment``.
        **kwargs: brax's constructor arguments of that environment.
    """

    def __init__(
        self,
        name: str,
        *,
        backend: str | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        num_envs: int | None = None,
        **kwargs: Any,
    ):
        limit = take_time_limit(kwargs, "episode_length", building.DEFAULT_LIMIT)
        building.check_arguments(name, backend, limit, reset_mode, reset_spares, num_envs, kwargs)
        brax_env = building.build(building.import_brax_envs(), name, backend, kwargs)
        self._setup(name, brax_env, limit, reset_mode, reset_spares, num_envs)

    @classmethod
    def from_env(
        cls,
        brax_env: Any,
        *,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        num_envs: int | None = None,
        **limit: Any,
    ) -> BraxEnvironment:
        """Wrap a brax environment object (yours, not only a registered one); no brax wrapper applied."""
        name = type(brax_env).__name__
        episode_length = take_time_limit(limit, "episode_length", building.DEFAULT_LIMIT)
        building.check_arguments(name, None, episode_length, reset_mode, reset_spares, num_envs, limit)
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
        with quiet():
            obs = jax.eval_shape(brax_env.reset, jax.random.key(0)).obs
        super().__init__(
            observation_space=_obs_space(obs),
            action_space=spaces.Box(-1.0, 1.0, (brax_env.action_size,), np.float32),
            num_envs=num_envs,
            max_episode_steps=episode_length,
            reset_mode=reset_mode,
            reset_spares=reset_spares,
        )
        self.name = name
        self.brax_env = brax_env
        self.mjx_params = system_params(brax_env)  # the params (WithMjxParams); None for fast (no physics)

    @property
    def episode_length(self) -> int | None:
        """brax's name for ``max_episode_steps``."""
        return self.max_episode_steps

    render_modes = ("rgb_array", "html")

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata,
            "library": f"brax {importlib.metadata.version('brax')}",
            "pipeline": getattr(self.brax_env, "backend", None),
        }

    def _render(self, state: JaxState[Any], index: int | None) -> Any:
        from envhub_brax.render import draw

        return draw(self, state, index)

    def _render_html(self, states: JaxState[Any], index: int) -> str:
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

    # --- one environment, as envhub's JAX base needs it ----------------------------------------

    def _reset_one(self, key: jax.Array, params: Any = None) -> tuple[Any, Any]:
        with quiet():
            brax_state = self.with_params(self.brax_env, params).reset(key)
        return brax_state, brax_state.obs

    def _step_one(self, key: jax.Array, state: Any, action: jax.Array, params: Any = None) -> JaxStep:
        with quiet():
            stepped = self.with_params(self.brax_env, params).step(state, action)  # brax's step takes no key
        no_truncation = jnp.zeros((), jnp.bool_)  # brax has no time limit of its own: the base's counts
        return JaxStep(
            state=stepped,
            obs=stepped.obs,
            reward=stepped.reward,
            terminated=stepped.done > 0,
            truncated=no_truncation,
            info=dict(stepped.metrics),
        )


def _obs_space(obs: Any) -> spaces.Space:
    """Unbounded Boxes shaped like brax's observation (an array, or a dict of arrays)."""
    if isinstance(obs, dict):
        return spaces.Tree({k: _obs_space(v) for k, v in obs.items()})
    return spaces.Box(-np.inf, np.inf, tuple(obs.shape), np.dtype(obs.dtype))
