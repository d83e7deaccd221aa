"""The host bridge: CPU ("host") environments behind the functional API, inside jit, scan and vmap.

A ``HostEnvironment`` keeps its live host environments in a table it owns; the JAX-side state is
only ``HostState(handle, step)``. Traced calls go through ONE module-level callback (see
``envhub.host_callback``) that finds the environment object through a weak registry, so compiled code never
keeps an environment alive and JAX caches one callback, not one per environment. Eager calls skip
the callback and raise envhub errors directly. Under ``jax.vmap`` every mapped state is its own host
environment and is stepped with its own action; mapping actions over one unmapped state raises.

Subclasses (gymnasium, envpool) implement ``_host_make``, ``_host_reset``, ``_host_step`` and the
two ``single_*_space`` properties, working on NumPy arrays with a leading axis of ``n`` sub-envs.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import itertools
import math
import warnings
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from envhub import host_callback, spaces
from envhub.env import Environment
from envhub.errors import (
    ClosedEnvironmentError,
    EnvhubError,
    HostEnvError,
    HostVmapError,
    RenderError,
    StaleStateError,
)
from envhub.types import TimeStep

# Environment objects by uid, held weakly: the callback finds its environment here.
_OWNERS: weakref.WeakValueDictionary[int, HostEnvironment] = weakref.WeakValueDictionary()
_uids = itertools.count(1)
_handles = itertools.count(1)  # unique across environments, so one env refuses another's state
_STEP_MOD = 2**31


@dataclasses.dataclass(frozen=True)
class HostState:
    """The JAX side of a host environment: which one (``handle``) and how far it got (``step``)."""

    handle: jax.Array  # int32; shape () unbatched, (num_envs,) batched (all equal)
    step: jax.Array  # int32; init is 0, every reset/step adds 1; the host keeps the newest


jax.tree_util.register_dataclass(HostState, data_fields=["handle", "step"], meta_fields=[])


def key_to_seeds(key: jax.Array, n: int) -> jax.Array:
    """The ``n`` uint32 seeds ``init(key)``/``reset(key, state)`` give the host sub-environments."""
    return jax.random.bits(key, (n,), jnp.uint32)


class _Slot:
    """One live host environment: the backend object and the newest step counter."""

    __slots__ = ("host", "step")

    def __init__(self, host: Any):
        self.host, self.step = host, 0


class _HostTable:
    """The live host environments of one ``HostEnvironment`` (it holds no reference back to it)."""

    def __init__(self) -> None:
        self.slots: dict[int, _Slot] = {}
        self.spare: Any = None  # a host env made early (e.g. to read its spaces), used by the first init

    def close_all(self) -> None:
        hosts = [slot.host for slot in self.slots.values()] + ([self.spare] if self.spare is not None else [])
        self.slots.clear()
        self.spare = None
        for host in hosts:
            try:
                host.close()
            except Exception as exc:  # noqa: BLE001 - closing must go on for the others
                message = f"closing a host environment raised {type(exc).__name__}: {exc}"
                warnings.warn(message, RuntimeWarning, stacklevel=2)


class HostEnvironment(Environment[HostState, Any, Any]):
    """Base class of environments living in this process, stepped through a host callback.

    Every host environment is a vector of ``n = num_envs or 1`` sub-environments; unbatched envs
    drop the leading axis. Subclasses return NumPy arrays in same-step auto-reset form.
    """

    is_jax_native = False

    def __init__(self, num_envs: int | None = None):
        self.num_envs = num_envs
        self._n = 1 if num_envs is None else num_envs
        self._uid = next(_uids)
        self._table = _HostTable()
        self._finalizer = weakref.finalize(self, self._table.close_all)  # on GC and at exit
        _OWNERS[self._uid] = self

    # --- what subclasses implement -----------------------------------------------------------

    @abc.abstractmethod
    def _host_make(self) -> Any:
        """Create one host vector environment of ``self._n`` sub-envs; it must have ``close()``."""

    @abc.abstractmethod
    def _host_reset(self, host: Any, seeds: list[int]) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env with its seed; return ``(obs, info)`` with a leading axis of ``n``."""

    @abc.abstractmethod
    def _host_step(self, host: Any, action: Any) -> tuple[Any, Any, Any, Any, Any, dict[str, Any]]:
        """Step; return ``(obs, reward, terminated, truncated, final_obs, info)``, auto-reset same-step."""

    def _host_reset_where(self, host: Any, seeds: list[int], mask: np.ndarray) -> tuple[Any, dict[str, Any]]:
        """Reset only the sub-envs where ``mask``; return ``(obs, info)`` for all ``n`` (others: current)."""
        raise NotImplementedError(f"{type(self).__name__} cannot reset a subset of its sub-environments")

    def _host_render(self, host: Any) -> Any:
        """RGB frames ``(n, H, W, 3)`` of every sub-env of ``host``; the default cannot draw."""
        raise RenderError(self.id, f"{type(self).__name__} has no renderer", "record its observations instead")

    @property
    @abc.abstractmethod
    def single_observation_space(self) -> spaces.Space: ...

    @property
    @abc.abstractmethod
    def single_action_space(self) -> spaces.Space: ...

    @property
    def info_spec(self) -> dict[str, jax.ShapeDtypeStruct]:
        """Per-sub-env shape and dtype of every ``info`` key kept (missing values become zeros)."""
        return {}

    # --- spaces and bookkeeping ----------------------------------------------------------------

    @property
    def action_space(self) -> spaces.Space:
        space = self.single_action_space
        return space if self.num_envs is None else space.batch(self.num_envs)

    @property
    def observation_space(self) -> spaces.Space:
        space = self.single_observation_space
        return space if self.num_envs is None else space.batch(self.num_envs)

    def live_host_envs(self) -> int:
        """How many host (vector) environments this object keeps alive."""
        return len(self._table.slots) + (self._table.spare is not None)

    def _keep_spare(self, host: Any) -> None:
        """Hand a host env made early to the first ``init`` (closed with the others if unused)."""
        self._table.spare = host

    def _close(self) -> None:
        self._finalizer()

    def _render(self, state: HostState, index: int | None) -> Any:
        """Draw the live host env of ``state`` (which must be its newest state, as for ``step``)."""
        state = _check_state(self, state)
        _, slot = self._find_slot(np.asarray(state.handle), np.asarray(state.step))
        try:
            frames = np.asarray(self._host_render(slot.host))
        except EnvhubError:
            raise
        except Exception as exc:
            problem = f"its backend raised {type(exc).__name__}: {exc}"
            raise RenderError(self.id, problem, "see the backend's README for what rendering needs") from exc
        return frames[0] if self.num_envs is None else frames if index is None else frames[index]

    # --- the functional API --------------------------------------------------------------------

    def _init(self, key: jax.Array) -> tuple[HostState, TimeStep[Any]]:
        return _call(self, "init", None, key_to_seeds(key, self._n))

    def _reset(self, key: jax.Array, state: HostState) -> tuple[HostState, TimeStep[Any]]:
        return _call(self, "reset", _check_state(self, state), key_to_seeds(key, self._n))

    def _step(self, key: jax.Array, state: HostState, action: Any) -> tuple[HostState, TimeStep[Any]]:
        return _call(self, "step", _check_state(self, state), action)

    def _reset_where(self, key: jax.Array, state: HostState, where: jax.Array) -> tuple[HostState, TimeStep[Any]]:
        mask = jnp.reshape(
            jnp.asarray(where, jnp.bool_), (*jnp.shape(where)[: jnp.ndim(where) - len(self._env_shape())], self._n)
        )
        return _call(self, "reset_where", _check_state(self, state), (key_to_seeds(key, self._n), mask))

    # --- host side (runs in the callback, or directly when called eagerly) ---------------------

    def _env_shape(self) -> tuple[int, ...]:
        return () if self.num_envs is None else (self._n,)

    def _result_struct(self, batch: tuple[int, ...]) -> tuple[HostState, TimeStep[Any]]:
        """ShapeDtypeStructs of ``(state, timestep)`` with leading ``batch`` (vmap) axes."""
        lead = (*batch, *self._env_shape())

        def sds(shape: tuple[int, ...], dtype: Any) -> Any:
            return jax.ShapeDtypeStruct((*lead, *shape), dtype)

        obs = _space_tree(self.single_observation_space, lambda s: sds(s.shape, s.dtype))
        info = {k: sds(v.shape, v.dtype) for k, v in self.info_spec.items()}
        ts = TimeStep(obs, sds((), jnp.float32), sds((), jnp.bool_), sds((), jnp.bool_), obs, info)
        return HostState(sds((), jnp.int32), sds((), jnp.int32)), ts

    def _run(self, op: str, handle: Any, step: Any, payload: Any) -> tuple[HostState, TimeStep[Any]]:
        """Run ``op`` for one (unmapped) state on the host; return NumPy ``(state, timestep)``."""
        if self.closed:
            raise ClosedEnvironmentError(self.id, op)
        if op == "init":
            slot_handle, slot = self._new_slot()
        else:
            assert handle is not None and step is not None
            slot_handle, slot = self._find_slot(handle, step)
        try:
            if op == "step":
                ts = self._timestep(*self._host_step(slot.host, self._host_action(payload)))
            elif op == "reset_where":
                seeds, mask = payload
                seed_list = [int(s) for s in np.asarray(seeds).reshape(-1)]
                obs, info = self._host_reset_where(slot.host, seed_list, np.asarray(mask, np.bool_).reshape(-1))
                ts = self._timestep(obs, None, None, None, None, info)
            else:
                obs, info = self._host_reset(slot.host, [int(s) for s in np.asarray(payload).reshape(-1)])
                ts = self._timestep(obs, None, None, None, None, info)
        except EnvhubError:
            raise
        except Exception as exc:
            raise HostEnvError(self.id, op, exc) from exc
        slot.step = 0 if op == "init" else (slot.step + 1) % _STEP_MOD
        shape = self._env_shape()
        state = HostState(_full(shape, slot_handle), _full(shape, slot.step))
        return state, ts

    def _new_slot(self) -> tuple[int, _Slot]:
        host, self._table.spare = self._table.spare, None
        if host is None:
            try:
                host = self._host_make()
            except EnvhubError:
                raise
            except Exception as exc:
                raise HostEnvError(self.id, "init", exc) from exc
        handle = next(_handles) % _STEP_MOD
        self._table.slots[handle] = slot = _Slot(host)
        return handle, slot

    def _find_slot(self, handle: np.ndarray, step: np.ndarray) -> tuple[int, _Slot]:
        h, s = int(handle.flat[0]), int(step.flat[0])
        if handle.ndim and ((handle != h).any() or (step != s).any()):
            raise HostVmapError(
                self.id,
                "the state's handle/step leaves differ across num_envs (was the state sliced or mixed with another?)",
            )
        slot = self._table.slots.get(h)
        if slot is None:
            raise StaleStateError(self.id, s, None)
        if s != slot.step:
            raise StaleStateError(self.id, s, slot.step)
        return h, slot

    def _host_action(self, action: Any) -> Any:
        """Give the action a leading axis of ``n`` (unbatched envs have none)."""
        if isinstance(action, np.ndarray):
            return action if self.num_envs is not None else action[None]
        if self.num_envs is None:
            return jax.tree.map(lambda a: np.asarray(a)[None], action)
        return jax.tree.map(np.asarray, action)

    def _timestep(
        self, obs: Any, reward: Any, terminated: Any, truncated: Any, final_obs: Any, info: dict[str, Any]
    ) -> TimeStep[Any]:
        """Cast the subclass's NumPy outputs to the declared shapes and dtypes."""
        shape = self._env_shape()
        obs = _cast_obs(self.single_observation_space, obs, shape)
        info = {k: _cast(info.get(k, 0), (*shape, *v.shape), v.dtype) for k, v in self.info_spec.items()}
        if reward is None:  # init/reset
            zeros: Any = np.zeros(shape, np.bool_)
            return TimeStep(obs, _cast(0, shape, np.float32), zeros, zeros.copy(), obs, info)
        terminated = _cast(terminated, shape, np.bool_)
        truncated = _cast(truncated, shape, np.bool_) & ~terminated  # terminated wins
        final_obs = _cast_obs(self.single_observation_space, final_obs, shape)
        return TimeStep(obs, _cast(reward, shape, np.float32), terminated, truncated, final_obs, info)


def _space_tree(space: spaces.Space, fn: Any) -> Any:
    """Map ``fn`` over the leaf spaces of ``space``, keeping its pytree structure."""
    if isinstance(space, spaces.Tree):
        return space.treedef.unflatten([fn(s) for s in space.leaves])
    return fn(space)


def _full(shape: tuple[int, ...], value: int) -> Any:
    return np.full(shape, value, np.int32)


def _cast(x: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    a = np.asarray(x, dtype=dtype)
    if a.shape == shape:
        return a
    return a.reshape(shape) if a.size == math.prod(shape) else np.broadcast_to(a, shape).copy()


def _cast_obs(space: spaces.Space, obs: Any, lead: tuple[int, ...]) -> Any:
    if isinstance(space, spaces.Tree):
        leaves = space.treedef.flatten_up_to(obs)
        return space.treedef.unflatten([_cast(x, (*lead, *s.shape), s.dtype) for s, x in zip(space.leaves, leaves)])
    return _cast(obs, (*lead, *space.shape), space.dtype)


def _check_state(env: HostEnvironment, state: Any) -> HostState:
    if not isinstance(state, HostState):
        raise TypeError(
            f"{env.id!r} needs the HostState returned by init/reset/step, got {type(state).__name__}; "
            f"pass the state returned by the previous call."
        )
    return state


# --- the bridge: eager calls, the traced callback, and vmap -------------------------------------


def _call(env: HostEnvironment, op: str, state: HostState | None, payload: Any) -> tuple[HostState, TimeStep[Any]]:
    """Run ``op`` on the host: directly when every input is concrete, else through the callback."""
    handle, step = (None, None) if state is None else (state.handle, state.step)
    inputs = (handle, step, payload)
    if not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(inputs)):
        result = env._run(
            op,
            None if handle is None else np.asarray(handle),
            None if step is None else np.asarray(step),
            jax.tree.map(np.asarray, payload),
        )
        return jax.tree.map(lambda x: jnp.array(x, copy=True), result)  # copy: the host may reuse its buffers
    return _traced(env, op)(np.int32(env._uid), handle, step, payload)


def _traced(env: HostEnvironment, op: str) -> Any:
    """A ``custom_vmap`` function calling the host: mapped states run one after the other.

    It holds the environment weakly: traced programs (and JAX's caches of them) must not keep it alive.
    """
    env_ndim, env_id, env_ref = len(env._env_shape()), env.id, weakref.ref(env)

    @custom_vmap
    def call(uid: Any, handle: Any, step: Any, payload: Any) -> Any:
        # vmap axes lead: init's seeds are (*batch, n); a state's leaves are (*batch, *env_shape).
        lead = jnp.shape(payload) if handle is None else jnp.shape(handle)
        batch = tuple(lead[: len(lead) - (1 if handle is None else env_ndim)])
        owner = env_ref()
        if owner is None:
            raise ClosedEnvironmentError(env_id, op)
        struct = owner._result_struct(batch)
        args = [jnp.asarray(uid, jnp.int32), *([] if handle is None else [handle, step]), *jax.tree.leaves(payload)]
        layout = tuple((tuple(jnp.shape(a)), jnp.asarray(a).dtype.str) for a in args)
        callback = _Callback(op, env_id, layout, jax.tree.structure(payload))
        flat = host_callback.call_host(callback, jax.tree.leaves(struct), _pack(args))
        return jax.tree.unflatten(jax.tree.structure(struct), flat)

    @call.def_vmap
    def rule(axis_size: int, in_batched: Any, uid: Any, handle: Any, step: Any, payload: Any) -> Any:
        if handle is not None and not in_batched[1]:
            raise HostVmapError(
                env_id,
                f"jax.vmap maps the action or key of {op}() over {axis_size} values but "
                f"not the state, and one host environment cannot follow {axis_size} "
                f"trajectories",
            )

        def grow(x: Any, batched: bool) -> Any:
            return x if batched else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))

        if handle is not None:
            step = grow(step, in_batched[2])
        payload = jax.tree.map(grow, payload, in_batched[3])
        out = call(uid, handle, step, payload)
        return out, jax.tree.map(lambda _: True, out)

    return call


def _pack(arrays: list[Any]) -> jax.Array:
    """Pack arrays into one uint8 array: every callback argument costs a device_put, so pass one."""
    parts = []
    for a in arrays:
        a = jnp.asarray(a)
        if a.dtype == jnp.bool_:
            a = a.astype(jnp.uint8)
        parts.append(jax.lax.bitcast_convert_type(a, jnp.uint8).reshape(-1))
    return jnp.concatenate(parts)


@dataclasses.dataclass(frozen=True)
class _Callback:
    """The host function of one call shape; equal for equal shapes, so JAX caches one per shape."""

    op: str
    env_id: str  # for messages only
    layout: tuple[tuple[tuple[int, ...], str], ...]
    payload_tree: Any

    def __post_init__(self) -> None:
        slices, offset = [], 0
        for shape, dtype_str in self.layout:
            dtype = np.dtype(dtype_str)
            size = math.prod(shape) * dtype.itemsize
            slices.append((offset, offset + size, dtype, shape))
            offset += size
        object.__setattr__(self, "_slices", slices)  # not a field: equality stays by layout

    def __call__(self, packed: np.ndarray) -> list[np.ndarray]:
        packed = np.asarray(packed)
        slices = self._slices  # type: ignore[attr-defined]
        arrays = [packed[start:stop].view(dtype).reshape(shape) for start, stop, dtype, shape in slices]
        env = _OWNERS.get(int(arrays[0]))
        if env is None or (env.closed and self.op == "init"):
            raise ClosedEnvironmentError(self.env_id, self.op, traced=True)
        handle, step, payload = (None, None, arrays[1:]) if self.op == "init" else (arrays[1], arrays[2], arrays[3:])
        payload = jax.tree.unflatten(self.payload_tree, payload)
        return _run_batched(env, self.op, handle, step, payload)


def _run_batched(env: HostEnvironment, op: str, handle: Any, step: Any, payload: Any) -> list[np.ndarray]:
    """Run ``op`` for every mapped state (vmap axes lead), in order; return the flat results."""
    lead = (payload if op == "init" else handle).shape
    batch = lead[: len(lead) - (1 if op == "init" else len(env._env_shape()))]
    if not batch:
        return jax.tree.leaves(env._run(op, handle, step, payload))
    results = []
    for index in np.ndindex(*batch):
        at = functools.partial(_at, index)
        results.append(env._run(op, at(handle), at(step), jax.tree.map(at, payload)))
    stacked = jax.tree.map(lambda *xs: np.stack(xs).reshape((*batch, *xs[0].shape)), *results)
    return jax.tree.leaves(stacked)


def _at(index: tuple[int, ...], x: Any) -> Any:
    return None if x is None else x[index]


__all__ = ["HostEnvironment", "HostState", "key_to_seeds"]
