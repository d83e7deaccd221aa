"""``ShardedEnvironment``: a batched environment split over a mesh of devices, on JAX's own engine.

It pins every leaf of ``init``/``reset``/``step`` that leads with ``num_envs`` to ``NamedSharding(mesh,
P(axis))``. Inside ``jax.jit`` XLA then keeps each environment's state on its own device for the
whole rollout: stepping is elementwise over the batch, so no step gathers to one device. Make one
with ``envhub.wrappers.sharding.shard(env, mesh)`` or ``envhub.make(id, num_envs=N, mesh=mesh)``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from envhub.core.env import Environment
from envhub.core.types import TimeStep
from envhub.errors import InvalidArgumentError
from envhub.native.state import JaxState
from envhub.wrappers.base import Wrapper


class ShardedEnvironment(Wrapper):
    """A batched JAX-native environment whose batch axis is split over ``mesh`` axis ``axis``.

    ``axis`` may be left out when the mesh has only one axis.
    """

    def __init__(self, env: Environment[Any, Any, Any], mesh: Mesh, axis: str | None = None):
        axis = _axis(mesh, axis)
        if env.num_envs is None:
            raise InvalidArgumentError(
                f"Sharding needs a batched env: make {env.id!r} with num_envs=N (a multiple of {mesh.shape[axis]})."
            )
        if not env.is_jax_native:
            raise InvalidArgumentError(
                f"{env.id!r} is a host environment: its pool lives in one process and cannot be split over devices. "
                f"Run one process per host, each making its own env with num_envs = its share, and use envhub.wrappers.sharding.process_key(key)."
            )
        if env.num_envs % mesh.shape[axis]:
            raise InvalidArgumentError(
                f"num_envs={env.num_envs} does not divide evenly over mesh axis {axis!r} of size {mesh.shape[axis]}; "
                f"use a multiple of {mesh.shape[axis]}."
            )
        super().__init__(env)
        self.mesh, self.axis = mesh, axis
        self.batch_sharding = NamedSharding(mesh, PartitionSpec(axis))
        self.replicated = NamedSharding(mesh, PartitionSpec())

    def _pin(self, tree: Any) -> Any:
        n = self.env.num_envs

        def pin(x: Any) -> Any:
            if isinstance(x, JaxState):  # its params stay unpinned: see _unpinned_params
                return _unpinned_params(x, lambda t: jax.tree.map(pin, t))
            leads = getattr(x, "ndim", 0) >= 1 and x.shape[0] == n
            return jax.lax.with_sharding_constraint(x, self.batch_sharding if leads else self.replicated)

        return jax.tree.map(pin, tree, is_leaf=lambda x: isinstance(x, JaxState))

    def _init(self, key: jax.Array, params: Any = None) -> tuple[Any, TimeStep[Any]]:
        return self._pin(self.env.init(key, params=params))

    def _reset(self, key: jax.Array, state: Any, params: Any = None) -> tuple[Any, TimeStep[Any]]:
        return self._pin(self.env.reset(key, self._pin(state), params=params))

    def _reset_where(
        self, key: jax.Array, state: Any, where: jax.Array, params: Any = None
    ) -> tuple[Any, TimeStep[Any]]:
        return self._pin(self.env.reset(key, self._pin(state), where=where, params=params))

    def _set_params(self, state: Any, params: Any, where: jax.Array | None) -> Any:
        return self._pin(self.env.set_params(self._pin(state), params, where))

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        return self._pin(self.env.step(key, self._pin(state), self._pin(action)))

    def over_time(self) -> NamedSharding:
        """The sharding of a stacked (time, num_envs, ...) output, for ``jax.jit(out_shardings=...)``."""
        return NamedSharding(self.mesh, PartitionSpec(None, self.axis))


def _unpinned_params(state: JaxState[Any], pin: Any) -> JaxState[Any]:
    """``state`` with every field pinned but its params. Params made from constants (the defaults) stay constants
    XLA folds the same way as in the unsharded program, so the sharded rollout stays bit-identical to it; a
    sharding constraint would make them opaque there alone. XLA shards them as the env rows they meet."""
    pinned = pin(dataclasses.replace(state, next_params=None, prior_params=None))
    return dataclasses.replace(pinned, next_params=state.next_params, prior_params=state.prior_params)


def _axis(mesh: Mesh, axis: str | None) -> str:
    if axis is None:
        if len(mesh.axis_names) != 1:
            raise InvalidArgumentError(
                f"The mesh has axes {mesh.axis_names}; name the one to shard environments over with axis=."
            )
        return str(mesh.axis_names[0])
    if axis not in mesh.axis_names:
        raise InvalidArgumentError(f"axis={axis!r} is not an axis of the mesh {mesh.axis_names}.")
    return axis


__all__ = ["ShardedEnvironment"]
