"""``GymnasiumEnvironment``: a gymnasium vector env behind the envhub API, through the host bridge."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import gymnasium
import jax
import numpy as np
from gymnasium import spaces as gym_spaces
from gymnasium.envs.registration import load_env_creator
from gymnasium.vector import AutoresetMode

from envhub import spaces
from envhub.errors import EnvUnavailableError, HostEnvError, InvalidArgumentError, RenderError
from envhub.host import HostEnvironment

# Vector-info keys TimeStep already carries, or that have no fixed shape.
_DROPPED_INFO = ("final_obs", "final_info")


class GymnasiumEnvironment(HostEnvironment):
    """One gymnasium vector env per ``init``, in ``AutoresetMode.SAME_STEP``, squeezed when unbatched.

    ``info`` keeps the numeric per-env keys seen in gymnasium's info after one probe ``reset`` and
    ``step`` at construction (zeros when a step lacks them); ``final_obs``/``final_info``, the
    ``_key`` masks and non-numeric or nested values are dropped.
    """

    def __init__(self, name: str, num_envs: int | None = None, vectorization_mode: str | None = None, **kwargs: Any):
        super().__init__(num_envs)
        self.id = f"gymnasium/{name}"
        self.name, self.kwargs = name, kwargs
        self.vectorization_mode = _pick_mode(name, vectorization_mode)
        if "render_mode" not in kwargs and "rgb_array" in _render_modes(name, self.vectorization_mode):
            kwargs["render_mode"] = "rgb_array"  # gymnasium draws lazily: nothing is drawn until render()
        self.render_modes = ("rgb_array",) if kwargs.get("render_mode") == "rgb_array" else ()
        host = self._host_make()  # the first vector env: read its spaces and info keys, keep it for init
        try:
            self._gym_action_space = host.single_action_space
            self._gym_observation_space = host.single_observation_space
            self._action_space = to_envhub_space(self._gym_action_space, self.id)
            self._observation_space = to_envhub_space(self._gym_observation_space, self.id)
            self._info_spec = self._probe_info(host)
        except BaseException:
            host.close()
            raise
        self._keep_spare(host)

    # --- the host side ---------------------------------------------------------------------------

    def _host_make(self) -> Any:
        kwargs = dict(self.kwargs)
        vector_kwargs: dict[str, Any] = {}
        if self.vectorization_mode == "vector_entry_point":
            if _accepts_autoreset_mode(self.name):
                kwargs["autoreset_mode"] = AutoresetMode.SAME_STEP
        else:  # copy=False: the bridge copies every output before the next step anyway
            vector_kwargs.update(autoreset_mode=AutoresetMode.SAME_STEP, copy=False)
        try:
            host = gymnasium.make_vec(
                self.name,
                num_envs=self._n,
                vectorization_mode=self.vectorization_mode,
                vector_kwargs=vector_kwargs,
                **kwargs,
            )
        except (gymnasium.error.DependencyNotInstalled, ImportError) as exc:
            raise EnvUnavailableError(self.id, f"{type(exc).__name__}: {exc}{_extra_hint(self.name)}") from exc
        mode = host.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            host.close()
            raise HostEnvError(
                self.id, "make", RuntimeError(f"the vector env uses autoreset mode {mode}, not SAME_STEP")
            )
        return host

    def _host_reset(self, host: Any, seeds: list[int]) -> tuple[Any, dict[str, Any]]:
        obs, info = host.reset(seed=seeds)
        return self._obs(obs), info

    def _host_reset_where(self, host: Any, seeds: list[int], mask: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = host.reset(seed=seeds, options={"reset_mask": mask})
        return self._obs(obs), info

    def _host_step(self, host: Any, action: Any) -> tuple[Any, Any, Any, Any, Any, dict[str, Any]]:
        obs, reward, terminated, truncated, info = host.step(to_gym_action(self._gym_action_space, action))
        obs = self._obs(obs)
        done = np.logical_or(terminated, truncated)
        final_obs = obs
        if done.any():  # info["final_obs"][i] is sub-env i's last obs, None where it did not end
            leaves = [np.array(x, copy=True) for x in self._leaves(obs)]
            for i in np.flatnonzero(done):
                for leaf, value in zip(leaves, self._leaves(_plain(info["final_obs"][i]))):
                    leaf[i] = value
            final_obs = self._unflatten(leaves)
        return obs, reward, terminated, truncated, final_obs, info

    def _host_render(self, host: Any) -> Any:
        if not self.render_modes:
            raise RenderError(
                self.id,
                f"it was made with render_mode={self.kwargs.get('render_mode')!r}, and frames need 'rgb_array'",
                "make it with render_mode='rgb_array' (the default where the env offers it)",
            )
        frames = host.render()
        if isinstance(frames, (list, tuple)):
            frames = np.stack([np.asarray(f) for f in frames])
        frames = np.asarray(frames)
        return frames[None] if frames.ndim == 3 else frames

    @property
    def metadata(self) -> dict[str, Any]:
        spec = gymnasium.spec(self.name)
        return {
            "time_limit": self.kwargs.get("max_episode_steps", spec.max_episode_steps),
            "library": f"gymnasium {gymnasium.__version__}",
            "vectorization_mode": self.vectorization_mode,
        }

    def _probe_info(self, host: Any) -> dict[str, jax.ShapeDtypeStruct]:
        """The numeric per-env info keys of one reset and one step (the env is reset again at init)."""
        _, reset_info = host.reset(seed=0)
        _, _, _, _, step_info = host.step(host.action_space.sample())
        spec = {}
        for info in (reset_info, step_info):
            for key, value in info.items():
                if key.startswith("_") or key in _DROPPED_INFO or not isinstance(value, np.ndarray):
                    continue
                if value.dtype.kind in "biuf" and value.shape[:1] == (self._n,):
                    spec[key] = jax.ShapeDtypeStruct(value.shape[1:], jax.dtypes.canonicalize_dtype(value.dtype))
        return dict(sorted(spec.items()))

    # --- spaces and structure ----------------------------------------------------------------------

    @property
    def single_action_space(self) -> spaces.Space:
        return self._action_space

    @property
    def single_observation_space(self) -> spaces.Space:
        return self._observation_space

    @property
    def info_spec(self) -> dict[str, jax.ShapeDtypeStruct]:
        return self._info_spec

    def _obs(self, obs: Any) -> Any:
        return _plain(obs)

    def _leaves(self, obs: Any) -> list[Any]:
        space = self._observation_space
        return space.treedef.flatten_up_to(obs) if isinstance(space, spaces.Tree) else [obs]

    def _unflatten(self, leaves: list[Any]) -> Any:
        space = self._observation_space
        return space.treedef.unflatten(leaves) if isinstance(space, spaces.Tree) else leaves[0]


def _extra_hint(name: str) -> str:
    """The gymnasium extra that installs what ``name`` needs, as a sentence (or "")."""
    entry = gymnasium.spec(name).entry_point
    for extra in ("box2d", "mujoco", "toy_text", "classic_control"):
        if isinstance(entry, str) and entry.startswith(f"gymnasium.envs.{extra}"):
            return f'; install it with: pip install "gymnasium[{extra}]"'
    return ""


def _pick_mode(name: str, requested: str | None) -> str:
    """gymnasium's own vector env when it can auto-reset in the same step, else sync (or as asked)."""
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
            f"cannot auto-reset in the same step (AutoresetMode.SAME_STEP), which envhub needs; "
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


def _accepts_autoreset_mode(name: str) -> bool:
    return _accepts(name, "autoreset_mode")


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
    return declared == AutoresetMode.SAME_STEP or _accepts_autoreset_mode(spec.id)


def _plain(x: Any) -> Any:
    """gymnasium's nested obs (OrderedDict, tuple) as plain dicts and tuples, matching envhub's Tree."""
    if isinstance(x, Mapping):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(_plain(v) for v in x)
    return x


def to_gym_action(space: gym_spaces.Space, action: Any) -> Any:
    """An envhub action (leading axis of n) in the structure and dtype gymnasium's vector env takes."""
    if isinstance(space, gym_spaces.Dict):
        return {k: to_gym_action(s, action[k]) for k, s in space.spaces.items()}
    if isinstance(space, gym_spaces.Tuple):
        return tuple(to_gym_action(s, a) for s, a in zip(space.spaces, action))
    return np.asarray(action, dtype=space.dtype)


def to_envhub_space(space: gym_spaces.Space, env_id: str = "gymnasium") -> spaces.Space:
    """Convert a gymnasium space to an envhub one (64-bit dtypes become JAX's default 32-bit ones)."""
    dtype = jax.dtypes.canonicalize_dtype(space.dtype) if space.dtype is not None else None
    if isinstance(space, gym_spaces.Discrete):
        return spaces.Discrete(int(space.n), int(space.start), dtype=dtype)
    if isinstance(space, gym_spaces.MultiDiscrete):
        return spaces.MultiDiscrete(space.nvec, space.start, dtype=dtype)
    if isinstance(space, gym_spaces.MultiBinary):
        return spaces.Box(0, 1, space.shape, dtype=dtype)
    if isinstance(space, gym_spaces.Box):
        return spaces.Box(space.low, space.high, space.shape, dtype=dtype)
    if isinstance(space, gym_spaces.Dict):
        return spaces.Tree({k: to_envhub_space(s, env_id) for k, s in space.spaces.items()})
    if isinstance(space, gym_spaces.Tuple):
        return spaces.Tree(tuple(to_envhub_space(s, env_id) for s in space.spaces))
    raise EnvUnavailableError(
        env_id,
        f"its space {space!r} ({type(space).__name__}) has no fixed-shape envhub "
        f"equivalent (envhub maps Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple)",
    )
