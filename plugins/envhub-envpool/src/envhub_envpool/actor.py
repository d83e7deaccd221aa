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

Both calls are ordered ``io_callback``s (or direct calls when used eagerly); the pool is seeded from
the key given to ``init``.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

from envhub.errors import ClosedEnvironmentError, InvalidArgumentError
from envhub.gymnasium_spaces import from_gymnasium_space
from envhub.host import key_to_seeds
from envhub.types import TimeStep
from envhub_envpool._shim import import_envpool
from envhub_envpool.layout import info_spec_of, map_space


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
        envpool = import_envpool()
        self.id, self.task, self.kwargs = f"envpool/{task}", task, kwargs
        self.num_envs, self.batch_size = num_envs, batch_size
        spec = envpool.make_spec(task, **kwargs)
        self.single_observation_space = from_gymnasium_space(spec.gymnasium_observation_space, self.id)
        self.single_action_space = from_gymnasium_space(spec.gymnasium_action_space, self.id)
        self._action_dtype = np.dtype(spec._action_spec[-1][0])
        self._info_spec = info_spec_of(spec)
        self._pool: Any = None
        self._ready: list[tuple[Any, ...]] = []  # rows received and translated, not yet returned
        self._held: dict[int, tuple[Any, ...]] = {}  # env id -> its finished row, waiting for the reset
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
        self._ready, self._held = [], {}
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
            return io_callback(fn, struct, *args, ordered=True)
        return jax.tree.map(jnp.asarray, fn(*jax.tree.map(np.asarray, args)))

    def _check_open(self, op: str) -> None:
        if self._closed or self._pool is None:
            raise ClosedEnvironmentError(self.id, op, traced=True)

    def _host_init(self, seeds: np.ndarray) -> np.ndarray:
        if self._closed:
            raise ClosedEnvironmentError(self.id, "init", traced=True)
        if self._pool is not None:
            self._pool.close()
        envpool = import_envpool()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self._pool = envpool.make(
                self.task,
                env_type="gymnasium",
                num_envs=self.num_envs,
                batch_size=self.batch_size,
                env_seed=[int(s) & 0x7FFFFFFF for s in seeds],
                **self.kwargs,
            )
        self._ready, self._held = [], {}
        self._pool.async_reset()
        return np.int32(0)

    def _host_send(self, handle: np.ndarray, action: Any, env_id: np.ndarray) -> np.ndarray:
        self._check_open("send")
        self._pool.send(np.asarray(action, self._action_dtype), np.asarray(env_id, np.int32))
        return np.int32(handle + 1)

    def _host_recv(self, handle: np.ndarray) -> Any:
        self._check_open("recv")
        while len(self._ready) < self.batch_size:
            obs, reward, terminated, truncated, info = self._pool.recv()
            ids = np.asarray(info["env_id"])
            kept = {k: np.asarray(info[k]) for k in self._info_spec}
            resets = []
            for r, e in enumerate(ids.tolist()):
                row = (
                    e,
                    jax.tree.map(lambda x, r=r: x[r], obs),
                    reward[r],
                    bool(terminated[r]),
                    bool(truncated[r]) and not bool(terminated[r]),
                    {k: v[r] for k, v in kept.items()},
                )
                held = self._held.pop(e, None)
                if held is not None:  # the reset row: the held finished step, with the new first obs
                    _, final_obs, rew, term, trunc, _ = held
                    self._ready.append((e, row[1], rew, term, trunc, final_obs, row[5]))
                elif row[3] or row[4]:
                    self._held[e] = row
                    resets.append(e)
                else:
                    self._ready.append((e, row[1], row[2], False, False, row[1], row[5]))
            if resets:  # envpool resets a finished env on its next step and ignores that action
                zeros = np.zeros((len(resets), *self.single_action_space.shape), self._action_dtype)
                self._pool.send(zeros, np.asarray(resets, np.int32))
        batch, self._ready = self._ready[: self.batch_size], self._ready[self.batch_size :]
        stack = lambda i: jax.tree.map(lambda *xs: np.stack(xs), *[row[i] for row in batch])  # noqa: E731
        info = {k: np.asarray(v, self._info_spec[k].dtype) for k, v in stack(6).items()}
        info["env_id"] = np.asarray([row[0] for row in batch], np.int32)
        cast = lambda tree: map_space(self.single_observation_space, lambda s, x: np.asarray(x, s.dtype), tree)  # noqa: E731
        ts = TimeStep(
            cast(stack(1)),
            np.asarray(stack(2), np.float32),
            np.asarray(stack(3), np.bool_),
            np.asarray(stack(4), np.bool_),
            cast(stack(5)),
            info,
        )
        return np.int32(handle + 1), ts


__all__ = ["AsyncEnvpool"]
