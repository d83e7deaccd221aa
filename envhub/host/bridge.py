"""The machinery behind ``HostEnvironment``: its table of live host envs, and eager, traced and vmapped calls.

One ``HostBridge`` per environment object. Eager calls (every input concrete) run on the host at
once and raise envhub errors directly. Traced calls go through ONE callback class
(``_Callback``, equal for equal shapes) that finds the bridge through a weak registry by uid, so
compiled code never keeps an environment alive and JAX caches one callback per shape, not one per
environment. Under ``jax.vmap`` every mapped state is its own host env, run one after the other.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_batching import custom_vmap

from envhub import spaces
from envhub.core.action_check import host_value_checker
from envhub.core.types import HostState, HostStep, TimeStep, truncated_unless_terminated
from envhub.errors import ClosedEnvironmentError, EnvhubError, HostEnvError, HostVmapError, StaleStateError
from envhub.host import callback as host_callback
from envhub.host.hooks import HostHooks

# Bridges by uid, held weakly: the traced callback finds its bridge here.
_BRIDGES: weakref.WeakValueDictionary[int, HostBridge] = weakref.WeakValueDictionary()
_uids = itertools.count(1)
_handles = itertools.count(1)  # unique across environments, so one env refuses another's state
VERSION_MOD = 2**31


class _Slot:
    """One live host environment: the backend object and the version of its newest state."""

    __slots__ = ("host", "version")

    def __init__(self, host: Any):
        self.host, self.version = host, 0


class _Table:
    """The live host environments of one bridge (it holds no reference to the environment)."""

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


class HostBridge:
    """Runs ``init``/``reset``/``reset_where``/``step`` of one ``HostEnvironment`` on its host envs."""

    def __init__(self, env: HostHooks):
        self.env_ref = weakref.ref(env)
        self._last_id = "host env"
        self.uid = next(_uids)
        self.table = _Table()
        self.lock = threading.Lock()
        self._layout: tuple[Any, tuple[str, ...]] | None = None  # (obs treedef or None, sorted info keys)
        self._value_checker: Callable[[Any], None] | None = None
        self.close = weakref.finalize(env, self.table.close_all)  # on close, GC and exit
        _BRIDGES[self.uid] = self

    def env_id(self) -> str:
        """The environment's id, for messages (the last one seen once the environment is gone)."""
        env = self.env_ref()
        if env is not None:
            self._last_id = env.id
        return self._last_id

    # --- dispatch --------------------------------------------------------------------------------

    def call(self, op: str, handle: Any, step: Any, payload: Any, check_values: bool = False) -> Any:
        """``(state, timestep)`` of ``op``: run now when every input is concrete, else through the callback
        (which first checks a step's action values when ``check_values``: a refused step changes nothing)."""
        inputs = (handle, step, payload)
        env = self._env(op)
        if not any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(inputs)):
            struct = result_struct(env, ())
            handle, step = (None if x is None else np.asarray(x) for x in (handle, step))
            values = self.run(op, handle, step, jax.tree.map(np.asarray, payload))
            leaves = jax.tree.leaves(struct)
            exact = [jnp.array(host_callback.exact(v, s), copy=True) for v, s in zip(values, leaves)]
            return jax.tree.unflatten(jax.tree.structure(struct), exact)  # copied: the host may reuse buffers
        traced = self._traced(op, len(env._env_shape()), env.id, check_values and op == "step")
        return traced(np.int32(self.uid), handle, step, payload)

    def _env(self, op: str) -> HostHooks:
        env = self.env_ref()
        if env is None:
            raise ClosedEnvironmentError(self.env_id(), op)
        return env

    def value_checker(self) -> Callable[[Any], None]:
        """The host-side check of one call's action (``envhub.core.action_check.host_value_checker``), built once."""
        if self._value_checker is None:
            env = self._env("step")
            self._value_checker = host_value_checker(env.id, env.action_space)
        return self._value_checker

    def _traced(self, op: str, env_ndim: int, env_id: str, check_values: bool) -> Callable[..., Any]:
        """A ``custom_vmap`` function calling the host; it holds the bridge weakly."""
        bridge_ref = weakref.ref(self)

        @custom_vmap
        def call(uid: Any, handle: Any, step: Any, payload: Any) -> Any:
            # vmap axes lead: init's seeds are (*batch, n); a state's leaves are (*batch, *env_shape).
            lead = jnp.shape(payload) if handle is None else jnp.shape(handle)
            batch = tuple(lead[: len(lead) - (1 if handle is None else env_ndim)])
            bridge = bridge_ref()
            if bridge is None:
                raise ClosedEnvironmentError(env_id, op)
            struct = result_struct(bridge._env(op), batch)
            args = [jnp.asarray(uid, jnp.int32), *([] if handle is None else [handle, step]), *jax.tree.leaves(payload)]
            callback = _Callback(op, env_id, jax.tree.structure(payload), len(batch), check_values)
            flat = host_callback.call_host(callback, jax.tree.leaves(struct), *args)
            return jax.tree.unflatten(jax.tree.structure(struct), flat)

        @call.def_vmap
        def rule(axis_size: int, in_batched: Any, uid: Any, handle: Any, step: Any, payload: Any) -> Any:
            if handle is not None and not in_batched[1]:
                raise HostVmapError(
                    env_id,
                    f"jax.vmap maps the action or key of {op}() over {axis_size} values but not the state, "
                    f"and one host environment cannot follow {axis_size} trajectories",
                )

            def grow(x: Any, batched: bool) -> Any:
                return x if batched else jnp.broadcast_to(x, (axis_size, *jnp.shape(x)))

            if handle is not None:
                step = grow(step, in_batched[2])
            payload = jax.tree.map(grow, payload, in_batched[3])
            out = call(uid, handle, step, payload)
            return out, jax.tree.map(lambda _: True, out)

        return call

    # --- the host side ---------------------------------------------------------------------------

    def run(self, op: str, handle: Any, step: Any, payload: Any) -> list[Any]:
        """Run ``op`` for one (unmapped) state; return the result leaves in ``result_struct`` order.

        One call at a time per environment object: of two threads stepping the same state, one gets
        ``StaleStateError`` (the check and the step it guards cannot interleave).
        """
        with self.lock:
            return self._run(op, handle, step, payload)

    def _run(self, op: str, handle: Any, step: Any, payload: Any) -> list[Any]:
        env = self._env(op)
        if env.closed:
            raise ClosedEnvironmentError(env.id, op)
        slot_handle, slot = self._new_slot(env) if op == "init" else self.find_slot(handle, step)
        try:
            if op == "step":
                out = env._host_step(slot.host, _with_env_axis(env, payload))
                if not isinstance(out, HostStep):
                    raise TypeError(f"{type(env).__name__}._host_step returned {type(out).__name__}, not a HostStep")
                obs, reward, final_obs, info = out.obs, out.reward, out.final_obs, out.info
                terminated: Any = np.asarray(out.terminated, np.bool_)
                truncated = truncated_unless_terminated(terminated, np.asarray(out.truncated, np.bool_))
            else:
                seeds = [int(s) for s in np.asarray(payload[0] if op == "reset_where" else payload).reshape(-1)]
                if op == "reset_where":
                    mask = np.asarray(payload[1], np.bool_).reshape(-1)
                    obs, info = env._host_reset_where(slot.host, seeds, mask)
                else:
                    obs, info = env._host_reset(slot.host, seeds)
                reward, terminated, truncated, final_obs = 0, False, False, obs
        except EnvhubError:
            raise
        except Exception as exc:
            raise HostEnvError(env.id, op, exc) from exc
        slot.version = 0 if op == "init" else (slot.version + 1) % VERSION_MOD
        if self._layout is None:  # the spaces are fixed: read them once
            space = env.single_observation_space
            self._layout = (space.treedef if isinstance(space, spaces.Tree) else None, tuple(sorted(env.info_spec)))
        obs_tree, info_keys = self._layout
        return [
            slot_handle,
            slot.version,
            *([obs] if obs_tree is None else obs_tree.flatten_up_to(obs)),
            reward,
            terminated,
            truncated,
            *([final_obs] if obs_tree is None else obs_tree.flatten_up_to(final_obs)),
            *(info.get(k, 0) for k in info_keys),
        ]

    def _new_slot(self, env: HostHooks) -> tuple[int, _Slot]:
        host, self.table.spare = self.table.spare, None
        if host is None:
            try:
                host = env._host_make()
            except EnvhubError:
                raise
            except Exception as exc:
                raise HostEnvError(env.id, "init", exc) from exc
        handle = next(_handles) % VERSION_MOD
        self.table.slots[handle] = slot = _Slot(host)
        return handle, slot

    def find_slot(self, handle: np.ndarray, step: np.ndarray) -> tuple[int, _Slot]:
        """The live host env of a state, which must be that env's newest."""
        h, s = int(handle.item(0)), int(step.item(0))
        if handle.size > 1 and (
            handle.tobytes() != handle[:1].tobytes() * handle.size or step.tobytes() != step[:1].tobytes() * step.size
        ):
            raise HostVmapError(
                self.env_id(),
                "the state's handle/step leaves differ across num_envs (was the state sliced or mixed with another?)",
            )
        slot = self.table.slots.get(h)
        if slot is None:
            raise StaleStateError(self.env_id(), s, None)
        if s != slot.version:
            raise StaleStateError(self.env_id(), s, slot.version)
        return h, slot


def result_struct(env: HostHooks, batch: tuple[int, ...]) -> Any:
    """ShapeDtypeStructs of ``(HostState, TimeStep)`` with leading ``batch`` (vmap) axes."""
    lead = (*batch, *env._env_shape())

    def sds(shape: tuple[int, ...], dtype: Any) -> Any:
        return jax.ShapeDtypeStruct((*lead, *shape), dtype)

    space = env.single_observation_space
    obs = (
        space.treedef.unflatten([sds(s.shape, s.dtype) for s in space.leaves])
        if isinstance(space, spaces.Tree)
        else sds(space.shape, space.dtype)
    )
    info = {k: sds(v.shape, v.dtype) for k, v in env.info_spec.items()}
    ts = TimeStep(obs, sds((), jnp.float32), sds((), jnp.bool_), sds((), jnp.bool_), obs, info)
    return HostState(sds((), jnp.int32), sds((), jnp.int32)), ts


def _with_env_axis(env: HostHooks, action: Any) -> Any:
    """Give the action a leading axis of ``n`` (unbatched envs have none)."""
    if env.num_envs is not None:
        return action if isinstance(action, np.ndarray) else jax.tree.map(np.asarray, action)
    return action[None] if isinstance(action, np.ndarray) else jax.tree.map(lambda a: np.asarray(a)[None], action)


@dataclasses.dataclass(frozen=True)
class _Callback:
    """The host function of one kind of call; equal for equal calls, so JAX caches one, not one per environment."""

    op: str
    env_id: str  # for messages only
    payload_tree: Any
    batch_ndim: int  # leading vmap axes
    check_values: bool = False  # check a step's action values before stepping any host env

    def __call__(self, *arrays: np.ndarray) -> list[Any]:
        bridge = _BRIDGES.get(int(arrays[0]))
        if bridge is None or (not bridge.close.alive and self.op == "init"):
            raise ClosedEnvironmentError(self.env_id, self.op, traced=True)
        handle, step, rest = (None, None, arrays[1:]) if self.op == "init" else (arrays[1], arrays[2], arrays[3:])
        payload = rest[0] if self.payload_tree.num_nodes == 1 else jax.tree.unflatten(self.payload_tree, rest)
        lead = (rest[0] if self.op == "init" else arrays[1]).shape[: self.batch_ndim]
        if self.check_values:  # every row before any steps, so a refusal leaves every state usable
            check = bridge.value_checker()
            for index in np.ndindex(*lead):
                check(jax.tree.map(functools.partial(_at, index), payload))
        if not self.batch_ndim:
            return bridge.run(self.op, handle, step, payload)
        struct = jax.tree.leaves(result_struct(bridge._env(self.op), ()))
        rows = []
        for index in np.ndindex(*lead):
            at = functools.partial(_at, index)
            values = bridge.run(self.op, at(handle), at(step), jax.tree.map(at, payload))
            rows.append([host_callback.exact(v, s) for v, s in zip(values, struct)])
        return [np.stack(column).reshape((*lead, *column[0].shape)) for column in zip(*rows)]


def _at(index: tuple[int, ...], x: Any) -> Any:
    return None if x is None else x[index]
