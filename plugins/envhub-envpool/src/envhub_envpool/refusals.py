"""How the fast path refuses what it cannot do: an old or closed pool's state, and ``jax.vmap``."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import numpy as np
from jax.custom_batching import custom_vmap

from envhub.errors import ClosedEnvironmentError, HostVmapError, StaleStateError


@dataclasses.dataclass(frozen=True)
class Refusal:
    """Host side of ``XlaPath.fail``: raise the error the pool's counter calls for (reviving it when stale)."""

    env_id: str
    op: str

    bound: Any = dataclasses.field(default=None, compare=False, repr=False)  # the Bound, revived when stale

    def __call__(self, step: np.ndarray, newest: np.ndarray) -> Any:
        if int(newest) < 0:
            raise ClosedEnvironmentError(self.env_id, self.op)
        if self.bound is not None:
            self.bound.revive(int(newest))
        raise StaleStateError(self.env_id, int(step), int(newest))


@functools.cache
def refuse_vmap(env_id: str, op: str) -> Any:
    """Identity on ``(state, action)`` whose ``jax.vmap`` rule raises ``HostVmapError``: a pool follows one trajectory."""

    @custom_vmap
    def identity(state: Any, action: Any) -> Any:
        return state, action

    @identity.def_vmap
    def rule(axis_size: int, in_batched: Any, state: Any, action: Any) -> Any:
        state_mapped = any(jax.tree.leaves(in_batched[0]))
        what = "the state" if state_mapped else f"the action over {axis_size} values but not the state"
        raise HostVmapError(
            env_id,
            f"jax.vmap maps {what} of {op}() of an envpool pool, which cannot follow several trajectories "
            f"per environment",
        )

    return identity


__all__ = ["Refusal", "refuse_vmap"]
