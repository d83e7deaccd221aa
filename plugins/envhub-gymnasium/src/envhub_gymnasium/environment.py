"""``GymnasiumEnvironment``: a gymnasium vector env behind the envhub API, through the host bridge."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import jax
import numpy as np
from gymnasium.vector import AutoresetMode

from envhub.plugin import (
    EnvUnavailableError,
    HostEnvError,
    HostEnvironment,
    HostStep,
    InvalidArgumentError,
    from_gymnasium_space,
    spaces,
    to_gymnasium_action,
)
from envhub_gymnasium import render, same_step
from envhub_gymnasium.quiet import built_quietly, load_env_creator

# Vector-info keys TimeStep already carries, or that have no fixed shape.
_DROPPED_INFO = ("final_obs", "final_info")


class GymnasiumEnvironment(HostEnvironment):
    """One gymnasium vector env per ``init``, auto-resetting in the same step, squeezed when unbatched.

    The vector env is gymnasium's own NumPy one (``vector_entry_point``) where it can reset in the
    same step, natively or through ``envhub_gymnasium.same_step``; else a sync vector env in
    ``AutoresetMode.SAME_STEP``. ``info`` keeps the numeric per-env keys seen after one probe
    ``reset`` and ``step`` at construction (or only ``info_keys``; zeros when a step lacks them);
    ``final_obs``/``final_info``, the ``_key`` masks and non-numeric or nested values are dropped.
    """

    def __init__(
        self,
        name: str,
        num_envs: int | None = None,
        vectorization_mode: str | None = None,
        info_keys: Sequence[str] | None = None,
        **kwargs: Any,
    ):
        self.id = f"gymnasium/{name}"
        self.name, self.kwargs = name, kwargs
        n = 1 if num_envs is None else num_envs
        self.vectorization_mode = _pick_mode(name, vectorization_mode)
        if "render_mode" not in kwargs and "rgb_array" in _render_modes(name, self.vectorization_mode):
            kwargs["render_mode"] = "rgb_array"  # gymnasium draws lazily: nothing is drawn until render()
        self.render_modes = ("rgb_array",) if kwargs.get("render_mode") == "rgb_array" else ()
        host = self._make_vector_env(n)  # the first vector env: read its spaces and info keys, keep it for init
        try:
            self._adapter = None
            if host.metadata.get("autoreset_mode") != AutoresetMode.SAME_STEP:
                host = self._adapt_or_fall_back(host, n)
            self._gym_action_space = host.single_action_space
            observation_space = from_gymnasium_space(host.single_observation_space, self.id)
            action_space = from_gymnasium_space(self._gym_action_space, self.id)
            info_spec = _probe_info(host, n, info_keys, self.id)
        except BaseException:
            host.close()
            raise
        super().__init__(num_envs, observation_space=observation_space, action_space=action_space, info_spec=info_spec)
        self._keep_spare(host)
        self._nested_obs = isinstance(observation_space, spaces.Tree)  # dicts/tuples to make plain each step
        flat_action = not isinstance(action_space, spaces.Tree)
        self._action_dtype = self._gym_action_space.dtype if flat_action else None

    def _adapt_or_fall_back(self, host: Any, n: int) -> Any:
        """Use the same-step adapter of a next-step vector env; if its attributes changed, a sync vector env."""
        host.reset(seed=0)
        self._adapter = same_step.adapter_for(host)
        if self._adapter is not None:
            return host
        host.close()
        warnings.warn(
            f"{self.id}: envhub's same-step adapter does not fit {type(host).__name__} of gymnasium "
            f"{gymnasium.__version__}; using the (slower) sync vector env",
            RuntimeWarning,
            stacklevel=3,
        )
        self.vectorization_mode = "sync"
        return self._make_vector_env(n)

    # --- the host side ---------------------------------------------------------------------------

    def _host_make(self) -> Any:
        return self._make_vector_env(self._n)

    def _make_vector_env(self, n: int) -> Any:
        kwargs = dict(self.kwargs)
        vector_kwargs: dict[str, Any] = {}
        if self.vectorization_mode == "vector_entry_point":
            if _accepts(self.name, "autoreset_mode"):
                kwargs["autoreset_mode"] = AutoresetMode.SAME_STEP
        else:  # copy=False: the bridge copies every output before the next step anyway
            vector_kwargs.update(autoreset_mode=AutoresetMode.SAME_STEP, copy=False)
        try:
            with built_quietly(self.name):
                host = gymnasium.make_vec(
                    self.name,
                    num_envs=n,
                    vectorization_mode=self.vectorization_mode,
                    vector_kwargs=vector_kwargs,
                    **kwargs,
                )
        except (gymnasium.error.DependencyNotInstalled, ImportError) as exc:
            raise EnvUnavailableError(self.id, f"{type(exc).__name__}: {exc}{_extra_hint(self.name)}") from exc
        mode = host.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP and not same_step.has_adapter(type(host)):
            host.close()
            problem = RuntimeError(f"the vector env uses autoreset mode {mode}, not SAME_STEP")
            raise HostEnvError(self.id, "make", problem)
        return host

    def _host_reset(self, host: Any, seeds: list[int]) -> tuple[Any, dict[str, Any]]:
        # gymnasium's NumPy vector envs take one seed for all their sub-envs
        obs, info = host.reset(seed=same_step.combined_seed(seeds) if self._adapter else seeds)
        return _plain(obs), info

    def _host_reset_where(self, host: Any, seeds: list[int], mask: Any) -> tuple[Any, dict[str, Any]]:
        if self._adapter is not None:
            host.np_random = np.random.default_rng(same_step.combined_seed(seeds))
            return self._adapter(host, mask), {}
        obs, info = host.reset(seed=seeds, options={"reset_mask": mask})
        return _plain(obs), info

    def _host_step(self, host: Any, action: Any) -> HostStep:
        if self._action_dtype is not None:
            action = np.asarray(action, self._action_dtype)
        else:
            action = to_gymnasium_action(self._gym_action_space, action)
        obs, reward, terminated, truncated, info = host.step(action)
        obs = _plain(obs) if self._nested_obs else obs
        done = np.logical_or(terminated, truncated)
        if not done.any():
            return HostStep(
                obs=obs, reward=reward, terminated=terminated, truncated=truncated, final_obs=obs, info=info
            )
        if self._adapter is not None:
            first = self._adapter(host, done)
            return HostStep(
                obs=first, reward=reward, terminated=terminated, truncated=truncated, final_obs=obs, info=info
            )
        # info["final_obs"][i] is sub-env i's last obs, None where it did not end
        leaves = [np.array(x, copy=True) for x in self._leaves(obs)]
        for i in np.flatnonzero(done):
            for leaf, value in zip(leaves, self._leaves(_plain(info["final_obs"][i]))):
                leaf[i] = value
        final_obs = self._unflatten(leaves)
        return HostStep(
            obs=obs, reward=reward, terminated=terminated, truncated=truncated, final_obs=final_obs, info=info
        )

    def _host_render(self, host: Any) -> Any:
        return render.frames(self, host)

    @property
    def metadata(self) -> dict[str, Any]:
        spec = gymnasium.spec(self.name)
        return {
            "time_limit": self.kwargs.get("max_episode_steps", spec.max_episode_steps),
            "library": f"gymnasium {gymnasium.__version__}",
            "vectorization_mode": self.vectorization_mode,
            "autoreset": "same-step, gymnasium's own"
            if self._adapter is None
            else "same-step, by envhub (gymnasium's env resets on the next step)",
        }

    def gymnasium_env(self) -> Any:
        """One plain ``gymnasium.make`` env made like this one (``envhub.interop.to_gymnasium`` steps it directly).

        Without auto-reset, gymnasium's env has envhub's meaning: an ending step returns the observation reached.
        """
        if self.num_envs is not None:
            raise InvalidArgumentError(
                f"gymnasium_env() of {self.id} with num_envs={self.num_envs}: make it unbatched."
            )
        with built_quietly(self.name):
            return gymnasium.make(self.name, **self.kwargs)

    # --- observation structure -----------------------------------------------------------------

    def _leaves(self, obs: Any) -> list[Any]:
        space = self.single_observation_space
        return space.treedef.flatten_up_to(obs) if hasattr(space, "treedef") else [obs]

    def _unflatten(self, leaves: list[Any]) -> Any:
        space = self.single_observation_space
        return space.treedef.unflatten(leaves) if hasattr(space, "treedef") else leaves[0]


def _probe_info(host: Any, n: int, keys: Sequence[str] | None, env_id: str) -> dict[str, jax.ShapeDtypeStruct]:
    """The numeric per-env info keys of one reset and one step (the env is reset again at init)."""
    if keys is not None and not keys:
        return {}
    _, reset_info = host.reset(seed=0)
    _, _, _, _, step_info = host.step(host.action_space.sample())
    spec = {}
    for info in (reset_info, step_info):
        for key, value in info.items():
            if key.startswith("_") or key in _DROPPED_INFO or not isinstance(value, np.ndarray):
                continue
            if value.dtype.kind in "biuf" and value.shape[:1] == (n,):
                spec[key] = jax.ShapeDtypeStruct(value.shape[1:], jax.dtypes.canonicalize_dtype(value.dtype))
    if keys is None:
        return spec
    missing = sorted(set(keys) - set(spec))
    if missing:
        raise InvalidArgumentError(
            f"info_keys={list(keys)!r} for {env_id}: {missing} are not numeric per-env info keys of it; "
            f"it reports {sorted(spec)} (or pass info_keys=() for none)."
        )
    return {k: spec[k] for k in keys}


def _extra_hint(name: str) -> str:
    """The gymnasium extra that installs what ``name`` needs, as a sentence (or "")."""
    entry = gymnasium.spec(name).entry_point
    for extra in ("box2d", "mujoco", "toy_text", "classic_control"):
        if isinstance(entry, str) and entry.startswith(f"gymnasium.envs.{extra}"):
            return f'; install it with: pip install "gymnasium[{extra}]"'
    return ""


def _pick_mode(name: str, requested: str | None) -> str:
    """gymnasium's own NumPy vector env when it (or envhub's adapter) can auto-reset in the same step, else sync."""
    spec = gymnasium.spec(name)
    # ale-py's AtariVectorEnv preprocesses (84x84 grayscale, 4 stacked frames, clipped rewards): it is
    # another environment than ALE/<Game>, so it is used only when asked for.
    preprocesses = str(spec.vector_entry_point).startswith("ale_py")
    native = spec.vector_entry_point is not None and not preprocesses and _vector_same_step(spec)
    if requested is None:
        return "vector_entry_point" if native else "sync"
    if requested not in ("sync", "async", "vector_entry_point"):
        raise InvalidArgumentError(
            f"vectorization_mode={requested!r} for gymnasium/{name}; use 'sync', 'async' or "
            f"'vector_entry_point' (or leave it out to pick the fastest)."
        )
    if requested == "vector_entry_point" and not native:
        raise InvalidArgumentError(
            f"vectorization_mode='vector_entry_point' for gymnasium/{name}, but its vector env "
            f"cannot auto-reset in the same step (AutoresetMode.SAME_STEP, or an adapter in "
            f"envhub_gymnasium.same_step), which envhub needs; "
            f"use 'sync' or 'async'."
        )
    return requested


def _render_modes(name: str, mode: str) -> list[str]:
    """The render modes gymnasium's env class ``name`` declares (``[]`` if it cannot be loaded or take one)."""
    if mode == "vector_entry_point" and not _accepts(name, "render_mode"):
        return []
    entry = gymnasium.spec(name).entry_point
    try:
        creator = entry if callable(entry) else load_env_creator(entry)
    except Exception:  # noqa: BLE001 - make() reports an unloadable env with its own error
        return []
    return list(getattr(creator, "metadata", {}).get("render_modes", []))


def _creator(name: str) -> Any:
    entry = gymnasium.spec(name).vector_entry_point
    return entry if callable(entry) else load_env_creator(entry)


def _accepts(name: str, parameter: str) -> bool:
    try:
        return parameter in inspect.signature(_creator(name)).parameters
    except (TypeError, ValueError):
        return False


def _vector_same_step(spec: Any) -> bool:
    try:
        creator = _creator(spec.id)
    except Exception:  # noqa: BLE001 - an unloadable vector entry point is simply not used
        return False
    declared = getattr(creator, "metadata", {}).get("autoreset_mode")
    return declared == AutoresetMode.SAME_STEP or _accepts(spec.id, "autoreset_mode") or same_step.has_adapter(creator)


def _plain(x: Any) -> Any:
    """gymnasium's nested obs (OrderedDict, tuple) as plain dicts and tuples, matching envhub's Tree."""
    if isinstance(x, Mapping):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(_plain(v) for v in x)
    return x
