"""``EnvpoolEnvironment``: an envpool pool behind the envhub API, with same-step auto-reset.

envpool resets a finished environment on its *next* step, ignoring that step's action. envhub
hides that step with **spare environments**: a pool of ``n`` logical environments holds ``2n``
envpool environments (async mode, ``batch_size=n``). ``n`` are active; the others are either
*fresh* (already reset, their first observation kept in the state) or *pending* (finished, not yet
reset). When logical env ``i`` finishes, the lowest-numbered fresh spare takes its place in the same
step, and the finished one becomes pending. Only when more envs finish in one step than there are
fresh spares does envhub send one extra batch: exactly ``n`` pending envs, which envpool resets
(their actions are ignored, and nobody sees that step). So almost every step is one envpool
round trip, with no dummy step and no Python callback.

Two paths run this same scheme and give bit-identical trajectories:

- **fast path** (envpool's XLA FFI ``send``/``recv``): used when ``init`` is called outside
  ``jit`` (the key is concrete, so the seeded pool exists before the step is traced). The state
  then names its pool statically, so ``jit`` compiles one program per pool.
- **host bridge** (``HostEnvironment``, one ordered ``io_callback`` per call): ``init`` inside
  ``jit``/``vmap``, tasks with 64-bit specs without ``jax_enable_x64``, ``fast_path=False``, or an
  envpool whose XLA template had to be stubbed.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import itertools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from envhub import host_callback, spaces
from envhub.errors import ClosedEnvironmentError, EnvUnavailableError, HostEnvError, HostVmapError, StaleStateError
from envhub.gymnasium_spaces import from_gymnasium_space
from envhub.host import HostEnvironment, HostState, HostStep, key_to_seeds
from envhub.types import TimeStep
from envhub_envpool import render
from envhub_envpool._shim import import_envpool, xla_available

_bound_ids = itertools.count(1)
_DROPPED_INFO = ("env_id", "players")  # physical ids: meaningless to the user


@dataclasses.dataclass(frozen=True)
class EnvpoolState:
    """The state of a fast-path (XLA) envpool environment.

    ``pool`` is static (part of the pytree structure), so a compiled step always talks to the pool
    it was traced for. The other leaves lead with ``num_envs`` (none when unbatched); ``fresh`` and
    ``first`` describe the ``2 * num_envs`` envpool environments as ``(num_envs, 2, ...)``.
    """

    handle: jax.Array  # int32, the pool id (equal everywhere)
    step: jax.Array  # int32, the newest step counter; the pool keeps its own and refuses old states
    phys: jax.Array  # int32, the envpool env each logical env is playing in
    fresh: jax.Array  # bool (n, 2): reset and waiting, with its first obs in `first`
    first: Any  # {"obs": ..., "info": {...}} of every fresh env, (n, 2, ...)
    pool: int = 0


jax.tree_util.register_dataclass(
    EnvpoolState, data_fields=["handle", "step", "phys", "fresh", "first"], meta_fields=["pool"]
)


class _Pool:
    """One envpool pool and the spare bookkeeping of the host bridge (NumPy, physical order)."""

    def __init__(self) -> None:
        self.env: Any = None
        self.phys: np.ndarray = np.zeros(0, np.int32)
        self.fresh: np.ndarray = np.zeros(0, np.bool_)
        self.first: dict[str, Any] = {}

    def close(self) -> None:
        env, self.env, self.eager_core = self.env, None, None
        if env is not None:
            env.close()


class _Bound:
    """A fast-path pool: envpool object, its XLA functions, and the newest step in a JAX Ref."""

    def __init__(self, env: Any, newest: jax.Array):
        self.env = env
        self.handle, self.recv, self.send, _ = env.xla()
        self.newest = newest  # jax Ref: read and written by compiled steps; -1 once closed
        self.eager_core: Any = None  # the step core jitted for eager calls, built on the first one

    def read_newest(self, env_id: str, op: str) -> int:
        """The newest step (eagerly); a failed jitted call consumes the Ref, which ends this pool."""
        try:
            return int(self.newest[...])
        except RuntimeError as exc:
            raise HostEnvError(
                env_id,
                op,
                RuntimeError(
                    "an earlier jitted call on this pool failed (e.g. a StaleStateError), and the pool's step "
                    "counter went with it; init a new state"
                ),
            ) from exc

    def close(self) -> None:
        try:
            self.newest[...] = jnp.int32(-1)
        except RuntimeError:  # already consumed by a failed jitted call
            pass
        env, self.env, self.eager_core = self.env, None, None
        if env is not None:
            env.close()


class EnvpoolEnvironment(HostEnvironment):
    """``num_envs`` (or one) envpool environments with same-step auto-reset; see the module docstring."""

    def __init__(self, task: str, num_envs: int | None = None, *, fast_path: bool = True, **kwargs: Any):
        self.id = f"envpool/{task}"
        self.task, self.kwargs = task, kwargs
        envpool = import_envpool()
        if task not in envpool.list_all_envs():
            raise EnvUnavailableError(self.id, "envpool does not list it (envpool.list_all_envs())")
        for reserved in ("num_envs", "batch_size", "seed", "env_seed", "env_type"):
            if reserved in kwargs:
                raise EnvUnavailableError(
                    self.id,
                    f"{reserved}= is set by envhub (num_envs= on envhub.make, seeds from the key); remove it",
                )
        self._spec = envpool.make_spec(task, **kwargs)
        super().__init__(
            num_envs,
            observation_space=from_gymnasium_space(self._spec.gymnasium_observation_space, self.id),
            action_space=from_gymnasium_space(self._spec.gymnasium_action_space, self.id),
            info_spec=_info_spec(self._spec),
        )
        self._observation_space, self._action_space = self.single_observation_space, self.single_action_space
        self._env_action_dtype = np.dtype(self._spec._action_spec[-1][0])  # what envpool's send takes
        wide = _has_64bit(self._spec) and not jax.config.jax_enable_x64
        self.fast_path_reason = (
            "fast_path=False"
            if not fast_path
            else "envpool's XLA interface is unavailable (stubbed at import)"
            if not xla_available()
            else "the task has 64-bit observations or actions and jax_enable_x64 is off"
            if wide
            else ""
        )
        self._bound: dict[int, _Bound] = {}

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
        return super().live_host_envs() + len(self._bound)

    def _close(self) -> None:
        for bound in self._bound.values():
            bound.close()
        self._bound.clear()
        super()._close()
        render.free(self)

    # --- rendering (envpool's render(env_ids) of the envs the logical envs play in) --------------

    render_modes = ("rgb_array",)

    def _render(self, state: Any, index: int | None) -> Any:
        if not isinstance(state, EnvpoolState):
            return super()._render(state, index)
        bound = self._owner(state, "render")
        self._check_newest(bound, state, "render")
        phys = np.asarray(state.phys).reshape(self._n)
        frames = render.frames(self, bound.env, phys if index is None else phys[index : index + 1])
        return frames[0] if self.num_envs is None or index is not None else frames

    def _host_render(self, host: _Pool) -> Any:
        return render.frames(self, host.env, host.phys)

    # --- pool creation and the physical <-> (n, 2) layout -------------------------------------

    def _make_pool(self, seeds: list[int]) -> Any:
        envpool = import_envpool()
        return envpool.make(
            self.task,
            env_type="gymnasium",
            num_envs=2 * self._n,
            batch_size=self._n,
            env_seed=[int(s) & 0x7FFFFFFF for s in seeds],
            **{"render_mode": "rgb_array", **self.kwargs},  # envpool draws only when render() is called
        )

    def _init_rows(self, env: Any) -> tuple[Any, dict[str, Any]]:
        """Reset every envpool env of a new pool; return their obs and info in physical order."""
        env.async_reset()
        parts = [self._row(env.recv()) for _ in range(2)]
        eid = np.concatenate([p[0] for p in parts])
        order = np.argsort(eid)
        obs = jax.tree.map(lambda *xs: np.concatenate(xs)[order], *[p[1] for p in parts])
        info = jax.tree.map(lambda *xs: np.concatenate(xs)[order], *[p[5] for p in parts])
        return obs, info

    def _row(self, out: Any) -> tuple[np.ndarray, Any, Any, Any, Any, dict[str, Any]]:
        obs, reward, terminated, truncated, info = out
        return np.asarray(info["env_id"]), obs, reward, terminated, truncated, self._keep_info(info)

    def _keep_info(self, info: dict[str, Any]) -> dict[str, Any]:
        return {k: info[k] for k in self._info_spec}

    def _lay(self, x: Any) -> Any:
        """Physical order ``(2n, ...)`` to the state layout ``(n, 2, ...)`` (``(2, ...)`` unbatched)."""
        y = x.reshape((2, self._n, *x.shape[1:])).swapaxes(0, 1)
        return y[0] if self.num_envs is None else y

    def _unlay(self, y: Any) -> Any:
        if self.num_envs is None:
            y = y[None]
        return y.swapaxes(0, 1).reshape((2 * self._n, *y.shape[2:]))

    def _squeeze(self, x: Any) -> Any:
        return x[0] if self.num_envs is None else x

    # --- the host bridge (HostEnvironment hooks, NumPy) ----------------------------------------

    def _init(self, key: jax.Array) -> tuple[Any, TimeStep[Any]]:
        if self.fast_path and not isinstance(key, jax.core.Tracer):
            return self._fast_init(key)
        return super()._init(key)

    def _num_seeds(self) -> int:
        return 2 * self._n  # one per envpool env: the active ones and their spares

    def _reset(self, key: jax.Array, state: Any) -> tuple[Any, TimeStep[Any]]:
        if isinstance(state, EnvpoolState):
            return self._fast_reset(state, jnp.ones(self._env_shape(), jnp.bool_))
        return super()._reset(key, state)

    def _reset_where(self, key: jax.Array, state: Any, where: jax.Array) -> tuple[Any, TimeStep[Any]]:
        if isinstance(state, EnvpoolState):
            return self._fast_reset(state, jnp.broadcast_to(where, self._env_shape()))
        return super()._reset_where(key, state, where)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        if isinstance(state, EnvpoolState):
            return self._fast_step(state, action)
        return super()._step(key, state, action)

    def _host_make(self) -> Any:
        return _Pool()

    def _host_reset(self, host: _Pool, seeds: list[int]) -> tuple[Any, dict[str, Any]]:
        if host.env is None:  # init: the pool is created from the key's seeds
            host.env = self._make_pool(seeds)
            obs, info = self._init_rows(host.env)
            host.phys = np.arange(self._n, dtype=np.int32)
            host.fresh = np.arange(2 * self._n) >= self._n
            host.first = {"obs": obs, "info": info}
            return _take(obs, host.phys), _take(info, host.phys)
        return self._host_reset_where(host, seeds, np.ones(self._n, np.bool_))

    def _host_reset_where(self, host: _Pool, seeds: list[int], mask: np.ndarray) -> tuple[Any, dict[str, Any]]:
        fresh, first, obs, info = _force_reset(self, host.env, host.phys, host.fresh, host.first, mask)
        host.fresh, host.first = fresh, first
        return obs, info

    def _host_step(self, host: _Pool, action: Any) -> HostStep:
        env, n = host.env, self._n
        env.send(np.asarray(action, self._env_action_dtype), host.phys)
        eid, obs, reward, terminated, truncated, info = self._row(env.recv())
        pos = np.empty(2 * n, np.int64)
        pos[host.phys] = np.arange(n)
        order = np.argsort(pos[eid])  # rows in logical order
        obs, info = _take(obs, order), _take(info, order)
        reward, terminated, truncated = reward[order], terminated[order], truncated[order]
        done = terminated | truncated
        if done.sum() > host.fresh.sum():  # not enough spares: reset n pending envs now
            pending = ~host.fresh
            pending[host.phys[~done]] = False
            ids = np.flatnonzero(pending)[:n].astype(np.int32)
            env.send(np.zeros((n, *self._action_space.shape), self._env_action_dtype), ids)
            rid, robs, _, _, _, rinfo = self._row(env.recv())
            _put(host.first["obs"], rid, robs)
            _put(host.first["info"], rid, rinfo)
            host.fresh[rid] = True
        spares = np.flatnonzero(host.fresh)
        new = host.phys.copy()
        new[done] = spares[: int(done.sum())]
        host.fresh[new[done]] = False
        host.phys = new
        final_obs = obs
        obs = _where(done, _take(host.first["obs"], new), obs)
        info = _where(done, _take(host.first["info"], new), info)
        return HostStep(obs, reward, terminated, truncated, final_obs, info)

    # --- the fast path (envpool's XLA send/recv, traced) ----------------------------------------

    def _fast_init(self, key: jax.Array) -> tuple[EnvpoolState, TimeStep[Any]]:
        env = self._make_pool([int(s) for s in np.asarray(key_to_seeds(key, 2 * self._n))])
        try:
            bound = _Bound(env, jax.new_ref(jnp.zeros((), jnp.int32)))
        except RuntimeError as exc:  # envpool disabled its own XLA interface (an incompatible jax)
            env.close()
            self.fast_path_reason = f"envpool's XLA interface is unavailable: {exc}"
            return super()._init(key)
        try:
            obs, info = self._init_rows(env)
        except BaseException:
            env.close()
            raise
        pool = next(_bound_ids) % 2**31
        self._bound[pool] = bound
        n = self._n
        phys = np.arange(n, dtype=np.int32)
        fresh = np.arange(2 * n) >= n
        state = EnvpoolState(
            handle=jnp.full(self._env_shape(), pool, jnp.int32),
            step=jnp.zeros(self._env_shape(), jnp.int32),
            phys=jnp.asarray(self._squeeze(phys)),
            fresh=jnp.asarray(self._lay(fresh)),
            first=jax.tree.map(lambda x: jnp.asarray(self._lay(x)), {"obs": obs, "info": info}),
            pool=pool,
        )
        first_obs, first_info = self._timestep_tree(_take(obs, phys)), self._info_tree(_take(info, phys))
        # Committed like a jitted step's outputs, so the first jitted call compiles once, not twice.
        return jax.device_put((state, TimeStep.first(first_obs, first_info, self._env_shape())), jax.devices()[0])

    def _timestep_tree(self, obs: Any) -> Any:
        """Logical-order obs (leading n) as JAX arrays of the declared dtypes, squeezed if unbatched."""
        return _map_space(self._observation_space, lambda s, x: jnp.asarray(self._squeeze(x), s.dtype), obs)

    def _info_tree(self, info: dict[str, Any]) -> dict[str, Any]:
        return {k: jnp.asarray(self._squeeze(info[k]), v.dtype) for k, v in self._info_spec.items()}

    def _owner(self, state: EnvpoolState, op: str) -> _Bound:
        bound = self._bound.get(state.pool)
        if bound is None:
            if self.closed:
                raise ClosedEnvironmentError(self.id, op)
            given = state.step if not isinstance(state.step, jax.core.Tracer) else -1
            raise StaleStateError(self.id, int(jnp.ravel(jnp.asarray(given))[0]), None)
        if not isinstance(state.step, jax.core.Tracer):
            bound.read_newest(self.id, op)  # refuses a pool whose counter a failed call consumed
        for leaf in jax.tree.leaves(state):
            if _is_batched(leaf):
                raise HostVmapError(
                    self.id,
                    f"jax.vmap maps the state of {op}() of an envpool pool, which cannot follow several "
                    f"trajectories per environment",
                )
        return bound

    def _check_newest(self, bound: _Bound, state: EnvpoolState, op: str) -> tuple[jax.Array, bool]:
        """Compare the state's step with the pool's newest: eagerly (raises) or as a traced bool."""
        step = jnp.ravel(state.step)[0]
        if isinstance(step, jax.core.Tracer):
            return step, False
        newest = bound.read_newest(self.id, op)
        if newest < 0:
            raise ClosedEnvironmentError(self.id, op)
        if int(step) != newest:
            raise StaleStateError(self.id, int(step), newest)
        return step, True

    def _fast_step(self, state: EnvpoolState, action: Any) -> tuple[EnvpoolState, TimeStep[Any]]:
        bound = self._owner(state, "step")
        for leaf in jax.tree.leaves(action):
            if _is_batched(leaf):
                raise HostVmapError(
                    self.id,
                    "jax.vmap maps the action of step() over values but not the state, and one envpool "
                    "environment cannot follow several trajectories",
                )
        step, checked = self._check_newest(bound, state, "step")
        action = jnp.reshape(jnp.asarray(action), (self._n, *self._action_space.shape))
        if not checked:  # traced: a stale state (or a closed env) raises from the host before envpool is touched
            guard = jax.lax.cond(
                step == bound.newest[...],
                lambda: jnp.zeros((), jnp.int32),
                lambda: self._fail(bound, step, "step"),
            )
            state = dataclasses.replace(state, phys=state.phys + guard)  # the send waits for the check
        if checked:  # eager: one compiled call; op by op, the refill cond would recompile every step
            if bound.eager_core is None:
                bound.eager_core = jax.jit(functools.partial(self._fast_core, bound))
            new_state, ts = bound.eager_core(state, action)
        else:
            new_state, ts = self._fast_core(bound, state, action)
        bound.newest[...] = jnp.ravel(new_state.step)[0]
        return new_state, ts

    def _fail(self, bound: _Bound, step: jax.Array, op: str) -> jax.Array:
        """The branch taken for a stale state or a closed env: raise from the host (shaped like a guard)."""
        env_id = self.id

        def raise_error(step: np.ndarray, newest: np.ndarray) -> Any:
            if int(newest) < 0:
                raise ClosedEnvironmentError(env_id, op)
            raise StaleStateError(env_id, int(step), int(newest))

        struct = [jax.ShapeDtypeStruct((), jnp.int32)]
        return host_callback.call_host(raise_error, struct, step, bound.newest[...])[0]  # only runs to raise

    def _fast_core(self, bound: _Bound, state: EnvpoolState, action: jax.Array) -> tuple[EnvpoolState, TimeStep[Any]]:
        n = self._n
        phys = jnp.reshape(state.phys, (n,))
        fresh = self._unlay(state.fresh)
        first = jax.tree.map(self._unlay, state.first)
        handle = bound.send(bound.handle, action.astype(self._env_action_dtype), phys)
        handle, out = bound.recv(handle)
        eid, obs, reward, terminated, truncated, info = self._row_traced(out)
        pos = jnp.zeros(2 * n, jnp.int32).at[phys].set(jnp.arange(n, dtype=jnp.int32))
        order = jnp.zeros(n, jnp.int32).at[pos[eid]].set(jnp.arange(n, dtype=jnp.int32))  # row of each logical env
        obs, info = _take(obs, order), _take(info, order)
        reward, terminated, truncated = reward[order], terminated[order], truncated[order]
        done = terminated | truncated

        def refill(carry: Any) -> Any:
            handle, fresh, first = carry
            pending = (~fresh).at[phys].set(done)  # finished or waiting, and not fresh
            ids = _first_true(pending, n)
            zeros = jnp.zeros((n, *self._action_space.shape), self._env_action_dtype)
            handle = bound.send(handle, zeros, ids)
            handle, out = bound.recv(handle)
            rid, robs, _, _, _, rinfo = self._row_traced(out)
            first = {
                "obs": jax.tree.map(lambda a, b: a.at[rid].set(b), first["obs"], robs),
                "info": jax.tree.map(lambda a, b: a.at[rid].set(b), first["info"], rinfo),
            }
            return handle, fresh.at[rid].set(True), first

        handle, fresh, first = jax.lax.cond(done.sum() > fresh.sum(), refill, lambda c: c, (handle, fresh, first))
        spares = _first_true(fresh, 2 * n)  # the fresh envs, lowest id first
        rank = jnp.clip(jnp.cumsum(done) - 1, 0, 2 * n - 1)
        new = jnp.where(done, spares[rank], phys).astype(jnp.int32)
        fresh = fresh.at[jnp.where(done, new, 2 * n)].set(False, mode="drop")
        final_obs = obs
        obs = _where(done, _take(first["obs"], new), obs, xp=jnp)
        info = _where(done, _take(first["info"], new), info, xp=jnp)
        new_state = EnvpoolState(
            handle=state.handle,
            step=(state.step + 1) & 0x7FFFFFFF,
            phys=self._squeeze(new),
            fresh=self._lay(fresh),
            first=jax.tree.map(self._lay, first),
            pool=state.pool,
        )
        terminated = self._squeeze(terminated)
        ts = TimeStep(
            self._timestep_tree(obs),
            self._squeeze(reward).astype(jnp.float32),
            terminated,
            self._squeeze(truncated) & ~terminated,
            self._timestep_tree(final_obs),
            self._info_tree(info),
        )
        return new_state, ts

    def _row_traced(self, out: Any) -> tuple[jax.Array, Any, Any, Any, Any, dict[str, Any]]:
        obs, reward, terminated, truncated, info = out
        return info["env_id"], obs, reward, terminated, truncated, self._keep_info(info)

    def _fast_reset(self, state: EnvpoolState, mask: jax.Array) -> tuple[EnvpoolState, TimeStep[Any]]:
        """Force-reset the masked logical envs (envpool's own reset, through Python): eager or a callback."""
        bound = self._owner(state, "reset")
        step, checked = self._check_newest(bound, state, "reset")
        n = self._n
        operands = (
            jnp.reshape(state.phys, (n,)),
            self._unlay(state.fresh),
            jax.tree.map(self._unlay, state.first),
            jnp.reshape(mask, (n,)),
        )

        def host(phys: Any, fresh: Any, first: Any, mask: Any, step: Any = None, newest: Any = None) -> Any:
            if newest is not None and int(newest) != int(step):
                if int(newest) < 0:
                    raise ClosedEnvironmentError(self.id, "reset")
                raise StaleStateError(self.id, int(step), int(newest))
            fresh, first, obs, info = _force_reset(
                self, bound.env, np.asarray(phys), np.array(fresh), jax.tree.map(np.array, first), np.asarray(mask)
            )
            return fresh, first, obs, info

        if checked:
            fresh, first, obs, info = host(*jax.tree.map(np.asarray, operands))
        else:
            struct = jax.eval_shape(lambda p, f, fi, m: (f, fi, _take(fi["obs"], p), _take(fi["info"], p)), *operands)
            fresh, first, obs, info = io_callback(host, struct, *operands, step, bound.newest[...], ordered=True)
        new_state = EnvpoolState(
            handle=state.handle,
            step=(state.step + 1) & 0x7FFFFFFF,
            phys=state.phys,
            fresh=jnp.asarray(self._lay(fresh)),
            first=jax.tree.map(lambda x: jnp.asarray(self._lay(x)), first),
            pool=state.pool,
        )
        bound.newest[...] = jnp.ravel(new_state.step)[0]
        return new_state, TimeStep.first(self._timestep_tree(obs), self._info_tree(info), self._env_shape())


def _force_reset(
    env: EnvpoolEnvironment, pool: Any, phys: np.ndarray, fresh: np.ndarray, first: dict[str, Any], mask: np.ndarray
) -> tuple[np.ndarray, dict[str, Any], Any, dict[str, Any]]:
    """envpool's own reset of the masked logical envs, padded to ``n`` with non-active envs (which become fresh).

    Returns the new ``fresh`` and ``first`` and, in logical order, the obs and info (zeros where not reset).
    """
    n = env._n
    targets = phys[mask]
    others = np.setdiff1d(np.arange(2 * n), phys)[: n - len(targets)]
    ids = np.concatenate([targets, others]).astype(np.int32)
    pool._reset(ids)  # envpool's force reset (its C++ call); async mode returns exactly these n rows
    out = pool.recv()
    eid, obs, _, _, _, info = env._row(out)
    first = {"obs": jax.tree.map(np.array, first["obs"]), "info": jax.tree.map(np.array, first["info"])}
    _put(first["obs"], eid, obs)
    _put(first["info"], eid, info)
    fresh = np.array(fresh)
    fresh[eid] = True
    fresh[phys] = False
    keep = mask.reshape(n)
    obs_out = jax.tree.map(lambda x: np.where(_expand(keep, x[phys]), x[phys], 0).astype(x.dtype), first["obs"])
    info_out = jax.tree.map(lambda x: np.where(_expand(keep, x[phys]), x[phys], 0).astype(x.dtype), first["info"])
    return fresh, first, obs_out, info_out


def _first_true(mask: jax.Array, k: int) -> jax.Array:
    """The indices of the first ``k`` true entries of ``mask``, ascending (a scatter: cheaper than a sort)."""
    rank = jnp.cumsum(mask) - 1
    slot = jnp.where(mask & (rank < k), rank, k)
    return jnp.zeros(k, jnp.int32).at[slot].set(jnp.arange(mask.shape[0], dtype=jnp.int32), mode="drop")


def _is_batched(x: Any) -> bool:
    """Whether ``x`` is being mapped by ``jax.vmap`` (a batching tracer)."""
    return isinstance(x, jax.core.Tracer) and any(t.__name__ == "BatchTracer" for t in type(x).__mro__)


def _take(tree: Any, index: Any) -> Any:
    return jax.tree.map(lambda x: x[index], tree)


def _put(tree: Any, index: np.ndarray, values: Any) -> None:
    for a, b in zip(jax.tree.leaves(tree), jax.tree.leaves(values)):
        a[index] = b


def _expand(mask: Any, like: Any) -> Any:
    return mask.reshape(mask.shape + (1,) * (like.ndim - mask.ndim))


def _where(mask: Any, a: Any, b: Any, xp: Any = np) -> Any:
    return jax.tree.map(lambda x, y: xp.where(_expand(mask, x), x, y), a, b)


def _map_space(space: spaces.Space, fn: Any, tree: Any) -> Any:
    if isinstance(space, spaces.Tree):
        leaves = [None] * len(space.leaves) if tree is None else space.treedef.flatten_up_to(tree)
        return space.treedef.unflatten([fn(s, x) for s, x in zip(space.leaves, leaves)])
    return fn(space, tree)


def _info_spec(spec: Any) -> dict[str, jax.ShapeDtypeStruct]:
    """The per-env info keys envpool reports (``elapsed_step`` and its ``info:*`` keys, ids dropped)."""
    out = {}
    for key, (dtype, shape, *_) in zip(spec._state_keys, spec._state_spec):
        if key == "elapsed_step" or key.startswith("info:"):
            name = key.removeprefix("info:")
            if name.split(".")[0] in _DROPPED_INFO:
                continue
            dims = tuple(int(d) for d in shape if d != -1)
            out[name] = jax.ShapeDtypeStruct(dims, jax.dtypes.canonicalize_dtype(np.dtype(dtype)))
    return dict(sorted(out.items()))


def _has_64bit(spec: Any) -> bool:
    specs = list(spec._state_spec) + list(spec._action_spec)
    return any(np.dtype(d).itemsize == 8 and np.dtype(d).kind in "fiu" for d, *_ in specs)


__all__ = ["EnvpoolEnvironment", "EnvpoolState", "HostState"]
