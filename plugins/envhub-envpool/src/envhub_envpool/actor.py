"""Async actor loops: envpool's ``batch_size < num_envs`` mode with ``send``/``recv`` usable inside ``jit``.

``recv`` returns the first ``batch_size`` environments to finish their step (``ts.info["env_id"]``
says which); the policy acts on them and ``send`` hands their actions back while the other
environments keep stepping in envpool's threads, so policy compute overlaps environment stepping.

Same-step auto-reset, as everywhere in envhub: when an environment finishes, envpool would return
its terminal observation now and spend its next step (whatever the action) on the reset. Here the
finished row is held back, the reset is requested at once with a placeholder action nobody sees,
and the row is released when the reset arrives: ``final_obs`` is the terminal observation, ``obs``
the new episode's first, and the next ``send`` for that env is a real step. Each ``send`` of an
env gives exactly one row for it in a later ``recv``.

Both calls go through ``envhub.host.callback`` (ordered by the handle each returns and the next
takes), or run directly when used eagerly; the pool is seeded from the key given to ``init``.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from envhub.plugin import (
    ClosedEnvironmentError,
    InvalidArgumentError,
    TimeStep,
    call_host,
    from_gymnasium_space,
    key_to_seeds,
    spaces,
    truncated_unless_terminated,
)
from envhub_envpool._shim import import_envpool
from envhub_envpool.layout import info_spec_of, map_space
from envhub_envpool.pool import make_pool, refuse_reserved


class AsyncEnvpool:
    """An envpool pool of ``num_envs`` environments answering ``batch_size`` at a time.

    ``handle`` is an int32 token threaded through ``init``/``recv``/``send`` so that JAX keeps the
    calls in order; it carries no other meaning.
    """

    def __init__(self, task: str, num_envs: int, batch_size: int, **kwargs: Any):
        if not (0 < batch_size <= num_envs and (batch_size == num_envs or num_envs >= 2 * batch_size - 1)):
            raise InvalidArgumentError(
                f"batch_size={batch_size!r} with num_envs={num_envs!r}: an async pool needs "
                f"num_envs >= 2 * batch_size - 1 (so a batch can always finish while finished envs reset), "
                f"or batch_size == num_envs; use e.g. num_envs={2 * batch_size}."
            )
        self.id, self.task, self.kwargs = f"envpool/{task}", task, kwargs
        refuse_reserved(self.id, kwargs)
        envpool = import_envpool()
        self.num_envs, self.batch_size = num_envs, batch_size
        spec = envpool.make_spec(task, **kwargs)
        self.single_observation_space = from_gymnasium_space(spec.gymnasium_observation_space, self.id)
        self.single_action_space = from_gymnasium_space(spec.gymnasium_action_space, self.id)
        self._action_dtype = np.dtype(spec._action_spec[-1][0])
        self._info_spec = info_spec_of(spec)
        self._pool: Any = None
        self._ready: list[_Rows] = []  # rows received and translated, not yet returned
        self._held = _Held(num_envs, self.single_observation_space)
        space = self.single_observation_space
        self._obs_spaces = space.leaves if isinstance(space, spaces.Tree) else [space]
        self._obs_tree = space.treedef if isinstance(space, spaces.Tree) else jax.tree.structure(0)
        self._closed = False

    # --- the API ------------------------------------------------------------------------------

    def init(self, key: jax.Array) -> jax.Array:
        """Create the pool (seeded from ``key``) and start every environment's first episode."""
        seeds = key_to_seeds(key, self.num_envs)
        return self._call(self._host_init, jax.ShapeDtypeStruct((), jnp.int32), seeds)

    def recv(self, handle: jax.Array) -> tuple[jax.Array, TimeStep[Any]]:
        """Return the next ``batch_size`` finished steps; ``ts.info["env_id"]`` names their envs."""
        b = (self.batch_size,)
        obs = map_space(self.single_observation_space, lambda s, _: jax.ShapeDtypeStruct((*b, *s.shape), s.dtype), None)
        info = {k: jax.ShapeDtypeStruct((*b, *v.shape), v.dtype) for k, v in self._info_spec.items()}
        info["env_id"] = jax.ShapeDtypeStruct(b, jnp.int32)
        flag = jax.ShapeDtypeStruct(b, jnp.bool_)
        struct = (
            jax.ShapeDtypeStruct((), jnp.int32),
            TimeStep(obs, jax.ShapeDtypeStruct(b, jnp.float32), flag, flag, obs, info),
        )
        return self._call(self._host_recv, struct, handle)

    def send(self, handle: jax.Array, action: Any, env_id: jax.Array) -> jax.Array:
        """Step the envs ``env_id`` (as given by ``recv``) with ``action``; returns the next handle."""
        return self._call(self._host_send, jax.ShapeDtypeStruct((), jnp.int32), handle, action, env_id)

    def close(self) -> None:
        """Free the pool; calling it twice is harmless."""
        self._closed = True
        pool, self._pool = self._pool, None
        self._ready, self._held = [], _Held(self.num_envs, self.single_observation_space)
        if pool is not None:
            pool.close()

    def __enter__(self) -> AsyncEnvpool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- host side ----------------------------------------------------------------------------

    def _call(self, fn: Any, struct: Any, *args: Any) -> Any:
        if self._closed:
            raise ClosedEnvironmentError(self.id, fn.__name__.removeprefix("_host_"))
        if any(isinstance(x, jax.core.Tracer) for x in jax.tree.leaves(args)):
            flat_fn = _Flat(fn, jax.tree.structure(args))
            flat = call_host(flat_fn, jax.tree.leaves(struct), *jax.tree.leaves(args))
            return jax.tree.unflatten(jax.tree.structure(struct), flat)
        return jax.tree.map(jnp.asarray, fn(*jax.tree.map(np.asarray, args)))

    def _check_open(self, op: str) -> None:
        if self._closed or self._pool is None:
            raise ClosedEnvironmentError(self.id, op, traced=True)

    def _host_init(self, seeds: np.ndarray) -> np.ndarray:
        if self._closed:
            raise ClosedEnvironmentError(self.id, "init", traced=True)
        if self._pool is not None:
            self._pool.close()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._pool = make_pool(
                self.task, num_envs=self.num_envs, batch_size=self.batch_size, seeds=seeds, **self.kwargs
            )
        self._ready, self._held = [], _Held(self.num_envs, self.single_observation_space)
        self._pool.async_reset()
        return np.int32(0)

    def _host_send(self, handle: np.ndarray, action: Any, env_id: np.ndarray) -> np.ndarray:
        self._check_open("send")
        self._pool.send(np.asarray(action, self._action_dtype), np.asarray(env_id, np.int32))
        return np.int32(handle + 1)

    def _host_recv(self, handle: np.ndarray) -> Any:
        self._check_open("recv")
        while sum(len(rows.env_id) for rows in self._ready) < self.batch_size:
            self._translate(self._pool.recv())
        rows = self._ready[0] if len(self._ready) == 1 else _Rows.concat(self._ready)
        batch, rest = rows.split(self.batch_size)
        self._ready = [rest] if len(rest.env_id) else []
        unflatten = self._obs_tree.unflatten
        info = {**dict(zip(self._info_spec, batch.info)), "env_id": batch.env_id}
        ts = TimeStep(  # flags already follow the flag rule (_translate)
            obs=unflatten(batch.obs),
            reward=batch.reward,
            terminated=batch.terminated,
            truncated=batch.truncated,
            final_obs=unflatten(batch.final_obs),
            info=info,
        )
        return np.int32(handle + 1), ts

    def _translate(self, out: Any) -> None:
        """Turn one envpool ``recv`` into same-step rows (NumPy, no loop over rows): hold finished rows until
        their reset arrives, and ask envpool for those resets now (it ignores the placeholder action)."""
        obs, reward, terminated, truncated, info = out
        ids = np.asarray(info["env_id"], np.int32)
        obs = [np.asarray(x, s.dtype) for x, s in zip(self._obs_tree.flatten_up_to(obs), self._obs_spaces)]
        terminated = np.asarray(terminated, np.bool_)
        truncated = truncated_unless_terminated(terminated, np.asarray(truncated, np.bool_))
        reward = np.asarray(reward, np.float32)
        final_obs, held = obs, self._held
        arriving = held.waiting[ids]  # the reset rows: the held finished step, with the new first obs
        ending = ~arriving & (terminated | truncated)
        if arriving.any():
            reward = np.where(arriving, held.reward[ids], reward)
            terminated = np.where(arriving, held.terminated[ids], terminated)
            truncated = np.where(arriving, held.truncated[ids], truncated)
            final_obs = [np.where(_expand(arriving, o), h[ids], o) for h, o in zip(held.final_obs, obs)]
            held.waiting[ids[arriving]] = False
        if ending.any():
            done = ids[ending]
            held.waiting[done] = True
            held.reward[done], held.terminated[done], held.truncated[done] = (
                reward[ending],
                terminated[ending],
                truncated[ending],
            )
            for h, o in zip(held.final_obs, obs):
                h[done] = o[ending]
            zeros = np.zeros((len(done), *self.single_action_space.shape), self._action_dtype)
            self._pool.send(zeros, done)  # envpool resets a finished env on its next step
        info_values = [np.asarray(info[k], v.dtype) for k, v in self._info_spec.items()]
        rows = _Rows(ids, obs, reward, terminated, truncated, final_obs, info_values)
        self._ready.append(rows.take(~ending) if ending.any() else rows)


class _Rows(NamedTuple):
    """Same-step rows ready to return, in arrival order (obs and info as flat lists of arrays)."""

    env_id: np.ndarray
    obs: list[np.ndarray]
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_obs: list[np.ndarray]
    info: list[np.ndarray]

    def take(self, index: Any) -> _Rows:
        pick = [x[index] for x in (self.env_id, self.reward, self.terminated, self.truncated)]
        return _Rows(pick[0], [x[index] for x in self.obs], *pick[1:], [x[index] for x in self.final_obs],
                     [x[index] for x in self.info])  # fmt: skip

    def split(self, k: int) -> tuple[_Rows, _Rows]:
        return self.take(slice(None, k)), self.take(slice(k, None))

    @staticmethod
    def concat(parts: list[_Rows]) -> _Rows:
        def cat(xs: Any) -> Any:
            return np.concatenate(xs)

        def cat_lists(lists: Any) -> list[np.ndarray]:
            return [cat(column) for column in zip(*lists)]

        return _Rows(cat([p.env_id for p in parts]), cat_lists([p.obs for p in parts]),
                     cat([p.reward for p in parts]), cat([p.terminated for p in parts]),
                     cat([p.truncated for p in parts]), cat_lists([p.final_obs for p in parts]),
                     cat_lists([p.info for p in parts]))  # fmt: skip


class _Held:
    """Per envpool env: a finished step waiting for its reset row (``waiting``), and that step's values."""

    def __init__(self, num_envs: int, observation_space: Any):
        self.waiting = np.zeros(num_envs, np.bool_)
        self.reward = np.zeros(num_envs, np.float32)
        self.terminated = np.zeros(num_envs, np.bool_)
        self.truncated = np.zeros(num_envs, np.bool_)
        leaves = observation_space.leaves if hasattr(observation_space, "leaves") else [observation_space]
        self.final_obs = [np.zeros((num_envs, *s.shape), s.dtype) for s in leaves]


def _expand(mask: np.ndarray, like: np.ndarray) -> np.ndarray:
    return mask.reshape(mask.shape + (1,) * (like.ndim - 1))


__all__ = ["AsyncEnvpool"]


@dataclasses.dataclass(frozen=True)
class _Flat:
    """A host method taking and returning pytrees, called with and returning flat leaves (``call_host``'s form)."""

    fn: Any
    args: Any  # the treedef of the arguments

    def __call__(self, *leaves: Any) -> list[Any]:
        return jax.tree.leaves(self.fn(*jax.tree.unflatten(self.args, list(leaves))))
