"""Shard a batched environment over a mesh of devices, on JAX's own engine.

``shard(env, mesh)`` (or ``envhub.make(id, num_envs=N, mesh=mesh)``) wraps ``env`` in
``envhub.wrappers.ShardedEnvironment``, which keeps each environment's state on its own device
for the whole jitted rollout. Random keys are split with JAX's partitionable threefry, so a
sharded rollout equals the unsharded one bit for bit. Across processes, build the mesh from
``jax.devices()`` after ``jax.distributed.initialize``: the same code then runs one shard per process.

Host environments (gymnasium, envpool) live in one process and cannot be split over devices: run
one process per host with its own pool (``num_envs`` = its share) and ``process_key(key)``.
"""

from __future__ import annotations

from typing import Any

import jax
from jax.sharding import Mesh

from envhub.core.env import Environment
from envhub.wrappers.sharded import ShardedEnvironment  # its home; re-exported here, where it lived first


def shard(env: Environment[Any, Any, Any], mesh: Mesh, axis: str | None = None) -> ShardedEnvironment:
    """Split ``env``'s batch over ``mesh`` axis ``axis`` (default: the mesh's only axis)."""
    return ShardedEnvironment(env, mesh, axis)


def process_key(key: jax.Array) -> jax.Array:
    """A key of this process's own (``fold_in(key, process_index)``), for per-process host pools."""
    return jax.random.fold_in(key, jax.process_index())


__all__ = ["ShardedEnvironment", "process_key", "shard"]
