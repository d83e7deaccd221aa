"""``EnvpoolEnvironment``: an envpool pool behind the envhub API, with same-step auto-reset.

Same-step auto-reset comes from spare envpool environments (``spares``). Two paths run that one
scheme and give bit-identical trajectories:

- **fast path** (``xla_path``, envpool's XLA FFI ``send``/``recv``): used when ``init`` is called
  outside ``jit`` (the key is concrete, so the seeded pool exists before the step is traced).
- **host bridge** (``envhub.HostEnvironment``, one host callback per call): ``init`` inside
  ``jit``/``vmap``, tasks with 64-bit specs without ``jax_enable_x64``, ``fast_path=False``, or an
  envpool whose XLA template had to be stubbed.

``jax.vmap`` over a fast-path state or action raises ``HostVmapError`` (a pool follows one
trajectory per environment); ``jax.vmap`` over ``init`` keys gives one pool per key, on the bridge.

Action values: ``step`` checks them eagerly (``envhub.Environment.step``); traced, both paths check
them on the host (the bridge in its callback; the fast path in its guard's host branch, taken only
when the step's state is stale or the action may be invalid), and a refusal changes nothing: the
state given still steps. ``validate_actions=False`` and ``values_checked_by_caller`` turn it off.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.plugin import (
    EnvUnavailableError,
    HostEnvironment,
    HostState,
    HostStep,
    TimeStep,
    checks_values_on_host,
    host_value_checker,
    key_to_seeds,
)
from envhub_envpool import render, spares
from envhub_envpool._shim import import_envpool, xla_available
from envhub_envpool.layout import Layout, has_64bit
from envhub_envpool.pool import make_pool, refuse_reserved
from envhub_envpool.refusals import ValueCheck
from envhub_envpool.wire import Wire
from envhub_envpool.xla_path import EnvpoolState, XlaPath


class _Pool:
    """One envpool pool of the host bridge and its spare bookkeeping (NumPy, physical order)."""

    def __init__(self) -> None:
        self.env: Any = None
        self.wire: Any = None  # a Wire of env
        self.pool_ids: np.ndarray = np.zeros(0, np.int32)
        self.fresh: np.ndarray = np.zeros(0, np.bool_)
        self.first: dict[str, Any] = {}

    def close(self) -> None:
        env, self.env = self.env, None
        if env is not None:
            env.close()


class EnvpoolEnvironment(HostEnvironment):
    """``num_envs`` (or one) envpool environments with same-step auto-reset; see the module docstring."""

    render_modes = ("rgb_array",)
    host_arrays_owned = True  # envpool's recv makes new arrays every call; the spares copy wherever they write

    def __init__(self, task: str, num_envs: int | None = None, *, fast_path: bool = True, **kwargs: Any):
        self.id = f"envpool/{task}"
        self.task, self.kwargs = task, kwargs
        envpool = import_envpool()
        if task not in envpool.list_all_envs():
            raise EnvUnavailableError(self.id, "envpool does not list it (envpool.list_all_envs())")
        refuse_reserved(self.id, kwargs)
        self._spec = envpool.make_spec(task, **kwargs)
        self._layout = lay = Layout.of(self.id, self._spec, num_envs)
        super().__init__(
            num_envs, observation_space=lay.observation_space, action_space=lay.action_space, info_spec=lay.info_spec
        )
        wide = has_64bit(self._spec) and not jax.config.jax_enable_x64
        self.fast_path_reason = (
            "fast_path=False"
            if not fast_path
            else "envpool's XLA interface is unavailable (stubbed at import)"
            if not xla_available()
            else "the task has 64-bit observations or actions and jax_enable_x64 is off"
            if wide
            else ""
        )
        self._xla = XlaPath(lay)
        self._value_check: ValueCheck | None = None  # built on first use

    # --- metadata ------------------------------------------------------------------------------

    @property
    def fast_path(self) -> bool:
        """Whether ``init`` outside ``jit`` gives a state stepped through envpool's XLA calls."""
        return not self.fast_path_reason

    @property
    def metadata(self) -> dict[str, Any]:
        """How this environment runs (shown by ``envhub info``)."""
        return {
            "autoreset": "same-step (spare envpool environments; no ignored-action step is shown)",
            "fast_path": self.fast_path,
            "fast_path_reason": self.fast_path_reason or "init(key) outside jit uses envpool's XLA send/recv",
            "envpool_envs": 2 * self._n,
            "time_limit": self.kwargs.get("max_episode_steps", self._spec.config.max_episode_steps),
            "library": f"envpool {importlib.metadata.version('envpool')}",
        }

    def live_host_envs(self) -> int:
        return super().live_host_envs() + len(self._xla.pools)

    def _close(self) -> None:
        self._xla.close()
        super()._close()
        render.free(self)

    # --- rendering (envpool's render(env_ids) of the envs the logical envs play in) --------------

    def _render(self, state: Any, index: int | None) -> Any:
        if not isinstance(state, EnvpoolState):
            return super()._render(state, index)
        bound = self._xla.owner(state, "render", self.closed)
        self._xla.check_newest(bound, state, "render")
        pool_ids = np.asarray(state.pool_ids).reshape(self._n)
        frames = render.frames(self, bound.env, pool_ids if index is None else pool_ids[index : index + 1])
        return frames[0] if self.num_envs is None or index is not None else frames

    def _host_render(self, host: _Pool) -> Any:
        return render.frames(self, host.env, host.pool_ids)

    # --- dispatch: the fast path for its states, else the host bridge ---------------------------

    def _init(self, key: jax.Array) -> tuple[Any, TimeStep[Any]]:
        if not self.fast_path or isinstance(key, jax.core.Tracer):
            return super()._init(key)
        pool = self._make_pool([int(s) for s in np.asarray(key_to_seeds(key, self._num_seeds()))])
        try:
            bound = self._xla.bind(pool)
        except RuntimeError as exc:  # envpool disabled its own XLA interface (an incompatible jax)
            pool.close()
            self.fast_path_reason = f"envpool's XLA interface is unavailable: {exc}"
            return super()._init(key)
        try:
            return self._xla.init(bound, self._init_rows(pool))
        except BaseException:
            pool.close()
            raise

    def _num_seeds(self) -> int:
        return 2 * self._n  # one per envpool env: the active ones and their spares

    def _reset(self, key: jax.Array, state: Any) -> tuple[Any, TimeStep[Any]]:
        if isinstance(state, EnvpoolState):
            return self._xla.reset(state, jnp.ones(self._env_shape(), jnp.bool_), self.closed)
        return super()._reset(key, state)

    def _reset_where(self, key: jax.Array, state: Any, where: jax.Array) -> tuple[Any, TimeStep[Any]]:
        if isinstance(state, EnvpoolState):
            return self._xla.reset(state, where, self.closed)
        return super()._reset_where(key, state, where)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        if isinstance(state, EnvpoolState):
            return self._xla.step(state, action, self.closed, self._values_check())
        return super()._step(key, state, action)

    def _values_check(self) -> ValueCheck | None:
        """How the fast path's traced step checks action values (None: not at all; read while tracing)."""
        if not checks_values_on_host(self):
            return None
        if self._value_check is None:
            self._value_check = ValueCheck(self.action_space, host_value_checker(self.id, self.action_space))
        return self._value_check

    # --- pools --------------------------------------------------------------------------------

    def _make_pool(self, seeds: list[int]) -> Any:
        # envpool draws only when render() is called
        kwargs = {"render_mode": "rgb_array", **self.kwargs}
        return make_pool(self.task, num_envs=2 * self._n, batch_size=self._n, seeds=seeds, **kwargs)

    def _init_rows(self, pool: Any) -> tuple[Any, dict[str, Any]]:
        """Reset every envpool env of a new pool; return their obs and info in physical order."""
        pool.async_reset()
        parts = [self._layout.row(pool.recv()) for _ in range(2)]
        order = np.argsort(np.concatenate([np.asarray(p[0]) for p in parts]))
        obs = jax.tree.map(lambda *xs: np.concatenate(xs)[order], *[p[1] for p in parts])
        info = jax.tree.map(lambda *xs: np.concatenate(xs)[order], *[p[5] for p in parts])
        return obs, info

    # --- the host bridge (HostEnvironment hooks, NumPy) ----------------------------------------

    def _host_make(self) -> Any:
        return _Pool()

    def _host_reset(self, host: _Pool, seeds: list[int]) -> tuple[Any, dict[str, Any]]:
        if host.env is None:  # init: the pool is created from the key's seeds
            host.env = self._make_pool(seeds)
            host.wire = Wire(host.env, self._layout)
            obs, info = self._init_rows(host.env)
            host.pool_ids = np.arange(self._n, dtype=np.int32)
            host.fresh = np.arange(2 * self._n) >= self._n
            host.first = {"obs": obs, "info": info}
            return spares.take(obs, host.pool_ids), spares.take(info, host.pool_ids)
        return self._host_reset_where(host, seeds, np.ones(self._n, np.bool_))

    def _host_reset_where(self, host: _Pool, seeds: list[int], mask: np.ndarray) -> tuple[Any, dict[str, Any]]:
        host.fresh, host.first, obs, info = spares.force_reset(
            self._layout, host.env, host.pool_ids, host.fresh, host.first, mask
        )
        return obs, info

    def _host_step(self, host: _Pool, action: Any) -> HostStep:
        step = spares.numpy_step(self._layout, host.wire, host.pool_ids, host.fresh, host.first, action)
        host.pool_ids, host.fresh, host.first = step.pool_ids, step.fresh, step.first
        return step.rows


__all__ = ["EnvpoolEnvironment", "EnvpoolState", "HostState"]
