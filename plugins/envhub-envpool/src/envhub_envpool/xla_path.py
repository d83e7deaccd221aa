"""The fast path: envpool's XLA FFI ``send``/``recv`` traced into the caller's program, no Python per step.

Used when ``init`` is called outside ``jit`` (the key is concrete, so the seeded pool exists before
the step is traced). The state then names its pool statically (``EnvpoolState.pool``), so ``jit``
compiles one program per pool. Each pool keeps its newest state's version in a JAX Ref that compiled
steps read and write; a stale state, and (when traced) an invalid action value, is refused from the
host before envpool is touched, and leaves the pool and the state given as they were (``refusals``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.plugin import ClosedEnvironmentError, HostEnvError, StaleStateError, TimeStep, any_invalid, call_host
from envhub_envpool import spares
from envhub_envpool.layout import Layout
from envhub_envpool.refusals import Refusal, ValueCheck, refuse_vmap
from envhub_envpool.wire import Wire

_pool_ids = itertools.count(1)
_POOLS: weakref.WeakValueDictionary[int, Bound] = weakref.WeakValueDictionary()  # for host-side resets


@dataclasses.dataclass(frozen=True)
class EnvpoolState:
    """The state of a fast-path (XLA) envpool environment.

    ``pool`` is static (part of the pytree structure), so a compiled step always talks to the pool
    it was traced for. The other leaves lead with ``num_envs`` (none when unbatched); ``fresh`` and
    ``first`` describe the ``2 * num_envs`` envpool environments as ``(num_envs, 2, ...)``.
    """

    handle: jax.Array  # int32, the pool id (equal everywhere)
    version: jax.Array  # int32, which state of the pool this is; the pool keeps the newest and refuses old ones
    pool_ids: jax.Array  # int32, the envpool env each logical env is playing in
    fresh: jax.Array  # bool (n, 2): reset and waiting, with its first obs in `first`
    first: Any  # {"obs": ..., "info": {...}} of every fresh env, (n, 2, ...)
    pool: int = 0


jax.tree_util.register_dataclass(
    EnvpoolState, data_fields=["handle", "version", "pool_ids", "fresh", "first"], meta_fields=["pool"]
)


class Bound:
    """A fast-path pool: envpool object, its XLA functions, and the newest step in a JAX Ref."""

    def __init__(self, env: Any, layout: Layout):
        self.env, self.layout, self.wire = env, layout, Wire(env, layout)  # the wire: eager steps
        self.handle, self.recv, self.send, _ = env.xla()  # RuntimeError if envpool disabled its XLA interface
        self.newest = jax.new_ref(jnp.zeros((), jnp.int32))  # read and written by compiled steps; -1 once closed

    def read_newest(self, env_id: str, op: str) -> int:
        """The newest version (eagerly); a jitted call that failed otherwise than stale consumed the Ref."""
        try:
            return int(self.newest[...])
        except RuntimeError as exc:
            problem = RuntimeError(
                "an earlier jitted call on this pool failed (e.g. a StaleStateError), and the pool's step "
                "counter went with it; init a new state"
            )
            raise HostEnvError(env_id, op, problem) from exc

    def revive(self, newest: int) -> None:
        """After a refusal under ``jit`` (whose failed call consumed the Ref, donated to it): the Ref
        holds ``newest`` again, so the newest state still steps. The same Ref gets a new buffer, so
        compiled steps keep running; if this jax does not allow that, a new Ref, and JAX's caches
        cleared so that every jitted function traces (and compiles) once more, with it."""
        if not restore_in_place(self.newest, np.int32(newest)):
            self.newest = jax.new_ref(np.int32(newest))
            jax.clear_caches()

    def close(self) -> None:
        with contextlib.suppress(RuntimeError):  # the Ref may be consumed by a failed jitted call
            self.newest[...] = jnp.int32(-1)
        env, self.env = self.env, None
        if env is not None:
            env.close()


def restore_in_place(ref: Any, value: np.ndarray) -> bool:
    """Give ``ref`` (whose buffer a failed jitted call consumed) a new buffer holding ``value``: what
    ``jit`` itself does to write a Ref back (a jax internal). False if this jax does not allow it."""
    try:
        ref._refs._buf._replace_with(jax.device_put(value, ref.sharding))
    except Exception:  # noqa: BLE001 - any other jax takes the public route (Bound.revive)
        return False
    return True


class XlaPath:
    """The fast-path pools of one ``EnvpoolEnvironment`` and its traced ``init``/``step``/``reset``."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.pools: dict[int, Bound] = {}

    def close(self) -> None:
        for bound in self.pools.values():
            bound.close()
        self.pools.clear()

    def bind(self, pool_env: Any) -> Bound:
        """envpool's XLA functions of a new pool (``RuntimeError`` if envpool disabled its XLA interface)."""
        return Bound(pool_env, self.layout)

    def init(self, bound: Bound, rows: tuple[Any, Any]) -> tuple[EnvpoolState, TimeStep[Any]]:
        """The first state of a bound pool (``rows``: obs and info of all ``2n`` envs after reset, physical order)."""
        lay = self.layout
        pool = next(_pool_ids) % 2**31
        self.pools[pool] = _POOLS[pool] = bound
        obs, info = rows
        pool_ids = np.arange(lay.n, dtype=np.int32)
        state = EnvpoolState(
            handle=jnp.full(lay.env_shape, pool, jnp.int32),
            version=jnp.zeros(lay.env_shape, jnp.int32),
            pool_ids=jnp.asarray(lay.squeeze(pool_ids)),
            fresh=jnp.asarray(lay.lay(np.arange(2 * lay.n) >= lay.n)),
            first=jax.tree.map(lambda x: jnp.asarray(lay.lay(x)), {"obs": obs, "info": info}),
            pool=pool,
        )
        ts = TimeStep.first(
            lay.obs_tree(spares.take(obs, pool_ids)), lay.info_tree(spares.take(info, pool_ids)), lay.env_shape
        )
        # Committed like a jitted step's outputs, so the first jitted call compiles once, not twice.
        return jax.device_put((state, ts), jax.devices()[0])

    def owner(self, state: EnvpoolState, op: str, closed: bool) -> Bound:
        """The pool of ``state``: a ``StaleStateError`` if it is gone, ``ClosedEnvironmentError`` if the env is."""
        bound = self.pools.get(state.pool)
        if bound is None:
            if closed:
                raise ClosedEnvironmentError(self.layout.env_id, op)
            given = state.version if not isinstance(state.version, jax.core.Tracer) else -1
            raise StaleStateError(self.layout.env_id, int(jnp.ravel(jnp.asarray(given))[0]), None)
        return bound

    def check_newest(self, bound: Bound, state: EnvpoolState, op: str) -> tuple[Any, bool]:
        """Compare the state's step with the pool's newest: eagerly (raises) or as a traced bool."""
        if isinstance(state.version, jax.core.Tracer):
            return jnp.ravel(state.version)[0], False
        step = int(np.ravel(np.asarray(state.version))[0])
        newest = bound.read_newest(self.layout.env_id, op)  # refuses a pool whose counter a failed call consumed
        if newest < 0:
            raise ClosedEnvironmentError(self.layout.env_id, op)
        if step != newest:
            raise StaleStateError(self.layout.env_id, step, newest)
        return step, True

    def step(
        self, state: EnvpoolState, action: Any, closed: bool, values: ValueCheck | None = None
    ) -> tuple[EnvpoolState, TimeStep[Any]]:
        """One step. Traced, a stale state (or a closed env) and, with ``values``, an invalid action
        value raise from the host before envpool is touched; eagerly, ``Environment.step`` checked the values."""
        lay = self.layout
        if any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves((state, action))):
            state, action = refuse_vmap(lay.env_id, "step")(state, jax.tree.map(jnp.asarray, action))
        bound = self.owner(state, "step", closed)
        step, checked = self.check_newest(bound, state, "step")
        if checked:  # eager: envpool's own send/recv on NumPy (a compiled core would compile per pool)
            first = jax.tree.map(lambda x: lay.unlay(np.asarray(x)), state.first)
            pool_ids, fresh = np.asarray(state.pool_ids).reshape(lay.n), lay.unlay(np.asarray(state.fresh))
            action = np.reshape(np.asarray(action), (lay.n, *lay.action_space.shape))
            advanced = spares.numpy_step(lay, bound.wire, pool_ids, fresh, first, action)
            new_state, ts = jax.device_put(self.pack(state, advanced, np), jax.devices()[0])  # committed, as init's
            bound.newest[...] = np.int32((step + 1) & 0x7FFFFFFF)
            return new_state, ts
        # traced: one branch, taken only for a stale state or a maybe invalid action, calls the host
        newest = bound.newest[...]
        ok = step == newest if values is None else (step == newest) & ~any_invalid(values.space, action)
        fail = functools.partial(self.fail, bound, step, newest, "step", action, values)
        guard = jax.lax.cond(ok, lambda: jnp.zeros((), jnp.int32), fail)
        action = jnp.reshape(jnp.asarray(action), (lay.n, *lay.action_space.shape))
        state = dataclasses.replace(state, pool_ids=state.pool_ids + guard)  # the send waits for the check
        new_state, ts = self.core(bound, state, action)
        bound.newest[...] = jnp.ravel(new_state.version)[0]
        return new_state, ts

    def fail(
        self, bound: Bound, step: Any, newest: Any, op: str, action: Any = None, values: ValueCheck | None = None
    ) -> jax.Array:
        """The branch taken for a stale state, a closed env or (with ``values``) a maybe invalid action:
        raise from the host, or return 0 (shaped like a guard)."""
        struct = [jax.ShapeDtypeStruct((), jnp.int32)]
        if values is None:
            return call_host(Refusal(self.layout.env_id, op, bound=bound), struct, step, newest)[0]
        refusal = Refusal(self.layout.env_id, op, jax.tree.structure(action), bound, values.check)
        return call_host(refusal, struct, step, newest, *jax.tree.leaves(action))[0]

    def core(self, bound: Bound, state: EnvpoolState, action: jax.Array) -> tuple[EnvpoolState, TimeStep[Any]]:
        """One send/recv round trip through the spare scheme (``spares.advance`` with jax.numpy)."""
        lay = self.layout
        zeros = jnp.zeros((lay.n, *lay.action_space.shape), lay.action_dtype)

        def refill(handle: Any, ids: Any) -> Any:
            handle = bound.send(handle, zeros, ids)
            handle, out = bound.recv(handle)
            return handle, lay.row(out)

        handle = bound.send(bound.handle, action.astype(lay.action_dtype), jnp.reshape(state.pool_ids, (lay.n,)))
        handle, out = bound.recv(handle)
        first = jax.tree.map(lay.unlay, state.first)
        cond = jax.lax.cond
        step = spares.advance(
            jnp, lambda p, f, c: cond(p, f, lambda c: c, c), lay, jnp.reshape(state.pool_ids, (lay.n,)),
            lay.unlay(state.fresh), first, handle, lay.row(out), refill,
        )  # fmt: skip
        return self.pack(state, step)

    def pack(self, state: EnvpoolState, step: spares.Advanced, xp: Any = jnp) -> tuple[EnvpoolState, TimeStep[Any]]:
        """The new state and the TimeStep of one step of the scheme, as ``xp`` (NumPy or jax.numpy) arrays."""
        lay = self.layout
        new_state = EnvpoolState(
            handle=xp.asarray(state.handle),
            version=(xp.asarray(state.version) + 1) & 0x7FFFFFFF,
            pool_ids=lay.squeeze(step.pool_ids),
            fresh=lay.lay(step.fresh),
            first=jax.tree.map(lay.lay, step.first),
            pool=state.pool,
        )
        ts = TimeStep(  # the rows already follow the flag rule (spares.advance)
            obs=lay.obs_tree(step.rows.obs, xp),
            reward=xp.asarray(lay.squeeze(step.rows.reward), np.float32),
            terminated=lay.squeeze(step.rows.terminated),
            truncated=lay.squeeze(step.rows.truncated),
            final_obs=lay.obs_tree(step.rows.final_obs, xp),
            info=lay.info_tree(step.rows.info, xp),
        )
        return new_state, ts

    def reset(self, state: EnvpoolState, mask: jax.Array, closed: bool) -> tuple[EnvpoolState, TimeStep[Any]]:
        """Force-reset the masked logical envs (envpool's own reset, from Python): eagerly or through a callback."""
        lay = self.layout
        state, mask = refuse_vmap(lay.env_id, "reset")(state, jnp.broadcast_to(mask, lay.env_shape))
        bound = self.owner(state, "reset", closed)
        step, checked = self.check_newest(bound, state, "reset")
        pool_ids, fresh = jnp.reshape(state.pool_ids, (lay.n,)), lay.unlay(state.fresh)
        operands = (pool_ids, fresh, jax.tree.map(lay.unlay, state.first), jnp.reshape(mask, (lay.n,)))
        if checked:
            fresh, first, obs, info = _ForceReset(state.pool, jax.tree.structure(operands))(*jax.tree.leaves(operands))
        else:
            struct = jax.eval_shape(
                lambda p, f, i, m: (f, i, spares.take(i["obs"], p), spares.take(i["info"], p)), *operands
            )
            flat = call_host(
                _ForceReset(state.pool, jax.tree.structure(operands), checked=False),
                jax.tree.leaves(struct),
                *jax.tree.leaves(operands),
                step,
                bound.newest[...],
            )
            fresh, first, obs, info = jax.tree.unflatten(jax.tree.structure(struct), flat)
        new_state = EnvpoolState(
            handle=state.handle,
            version=(state.version + 1) & 0x7FFFFFFF,
            pool_ids=state.pool_ids,
            fresh=jnp.asarray(lay.lay(fresh)),
            first=jax.tree.map(lambda x: jnp.asarray(lay.lay(x)), first),
            pool=state.pool,
        )
        bound.newest[...] = jnp.ravel(new_state.version)[0]
        return new_state, TimeStep.first(lay.obs_tree(obs), lay.info_tree(info), lay.env_shape)


@dataclasses.dataclass(frozen=True)
class _ForceReset:
    """Host side of ``XlaPath.reset`` (traced: refuses a stale state first); returns flat results."""

    pool: int
    operands: Any  # the treedef of (pool_ids, fresh, first, mask)
    checked: bool = True  # False: the last two arguments are the state's step and the pool's newest

    def __call__(self, *args: Any) -> Any:
        bound = _POOLS.get(self.pool)
        if not self.checked:
            *args, step, newest = args
            if bound is None or int(newest) != int(step):
                Refusal(bound.layout.env_id if bound else "envpool", "reset", bound)(step, newest if bound else -1)
        assert bound is not None
        pool_ids, fresh, first, mask = jax.tree.unflatten(self.operands, [np.array(a) for a in args])
        out = spares.force_reset(bound.layout, bound.env, pool_ids, fresh, first, mask.astype(bool))
        return out if self.checked else jax.tree.leaves(out)
