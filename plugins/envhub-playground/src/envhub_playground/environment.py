"""``PlaygroundEnvironment``: one MuJoCo Playground environment (or a batch of them) behind the envhub API.

playground's training wrappers (``wrapper.wrap_for_brax_training``: brax's ``EpisodeWrapper`` and
``VmapWrapper``, playground's ``BraxAutoResetWrapper``) are not used: envhub's JAX base does their
work with envhub's meaning: the time limit as truncation, same-step auto-reset with the reached
observation in ``final_obs``, a real reset per episode (spare initial states), and the batch.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import envhub
from envhub.plugin import InvalidArgumentError, JaxStep, WithMjxParams, positive_int, spaces, take_time_limit
from envhub_playground.importing import import_registry, loaded
from envhub_playground.params import model_params

IMPLS = ("jax", "warp", "c", "cpp")


class PlaygroundEnvironment(WithMjxParams, envhub.JaxEnvironment[Any, Any, jax.Array]):
    """A playground environment on envhub's JAX base.

    Args:
        name: An id of ``mujoco_playground.registry``.
        max_episode_steps: Steps after which an episode is truncated (default: the env config's
            ``episode_length``, 1000 for most; ``None``: no limit). ``episode_length`` is an alias.
        impl: MJX's implementation (the config's ``impl``). Default: ``"jax"`` where jax runs on the
            CPU (playground's default, ``"warp"``, is made for NVIDIA GPUs), else the config's own.
        config: a whole ``ml_collections.ConfigDict`` replacing the env's default config.
        config_overrides: playground's flattened overrides (``{"reward_config.scales.energy": 0.0}``).
        reset_mode, reset_spares, num_envs: see ``envhub.JaxEnvironment``.
        **kwargs: top-level fields of the env's config (``ctrl_dt=0.02``, ``vision=False``, ...).
    """

    def __init__(
        self,
        name: str,
        *,
        impl: str | None = None,
        config: Any = None,
        config_overrides: dict[str, Any] | None = None,
        num_envs: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        **kwargs: Any,
    ):
        registry = import_registry()
        config = registry.get_default_config(name) if config is None else config
        limit = take_time_limit(kwargs, "episode_length", config.get("episode_length", 1000))
        where = f"(playground's episode_length) for playground/{name}"
        positive_int("max_episode_steps", limit, none="no time limit", where=where)
        overrides = {**(config_overrides or {}), **_config_fields(name, config, kwargs)}
        if limit is not None and "episode_length" in config:
            overrides["episode_length"] = limit  # some envs read it (e.g. vision variants change it)
        impl = impl or overrides.get("impl") or ("jax" if jax.default_backend() == "cpu" else config.get("impl"))
        if impl is not None:
            if impl not in IMPLS:
                raise InvalidArgumentError(f"impl={impl!r} for playground/{name}: use one of {IMPLS} (MJX's).")
            overrides["impl"] = impl
        if config.get("action_repeat", 1) != 1 or overrides.get("action_repeat", 1) != 1:
            raise InvalidArgumentError(
                f"action_repeat for playground/{name} is a training-wrapper setting envhub-playground does not "
                "apply: leave it at 1 and wrap the environment in envhub.wrappers.ActionRepeat."
            )
        self.name, self.impl = name, impl
        self.playground_env = loaded(registry, name, config=config, config_overrides=overrides)
        self.mjx_params = model_params(self.playground_env)  # the params (WithMjxParams)
        super().__init__(  # the observation space is read lazily: tracing a reset takes seconds
            action_space=spaces.Box(-1.0, 1.0, (self.playground_env.action_size,), np.float32),
            num_envs=num_envs,
            max_episode_steps=limit,
            reset_mode=reset_mode,
            reset_spares=reset_spares,
        )

    @property
    def single_observation_space(self) -> spaces.Space:
        """Unbounded Boxes shaped like playground's observation (a ``Tree`` of them for dict observations)."""
        if "_obs_space" not in self.__dict__:
            shapes = jax.eval_shape(self.playground_env.reset, jax.random.key(0)).obs
            boxes = jax.tree.map(lambda s: spaces.Box(-np.inf, np.inf, s.shape, s.dtype), shapes)
            self.__dict__["_obs_space"] = boxes if isinstance(boxes, spaces.Box) else spaces.Tree(boxes)
        space: spaces.Space = self.__dict__["_obs_space"]
        return space

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata,
            "library": f"playground {importlib.metadata.version('playground')}",
            "impl": self.impl,
        }

    @property
    def config(self) -> Any:
        """The env's ``ml_collections`` config, overrides applied."""
        return self.playground_env._config

    # --- one environment, as envhub's JAX base needs it ----------------------------------------

    def _reset_one(self, key: jax.Array, params: Any = None) -> tuple[Any, Any]:
        state = self.with_params(self.playground_env, params).reset(
            key
        )  # playground keeps its own key in state.info["rng"]
        return state, state.obs

    def _step_one(self, key: jax.Array, state: Any, action: jax.Array, params: Any = None) -> JaxStep:
        stepped = self.with_params(self.playground_env, params).step(state, action)  # playground's step takes no key
        no_truncation = jnp.zeros((), jnp.bool_)  # playground's time limit is a wrapper's: the base counts it
        return JaxStep(
            state=stepped,
            obs=stepped.obs,
            reward=stepped.reward,
            terminated=stepped.done > 0,
            truncated=no_truncation,
            info=dict(stepped.metrics),
        )


def _config_fields(name: str, config: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """kwargs naming top-level config fields, as overrides; any other kwarg is refused."""
    unknown = sorted(set(kwargs) - set(config.keys()))
    if unknown:
        raise InvalidArgumentError(
            f"{unknown[0]}={kwargs[unknown[0]]!r} for playground/{name} is not a field of its config: pass one of "
            f"{sorted(config.keys())}, max_episode_steps, impl, config= or config_overrides= (nested fields)."
        )
    return dict(kwargs)
