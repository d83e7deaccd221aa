"""How the fast path refuses what it cannot do: an old or closed pool's state, an invalid action value,
and ``jax.vmap``.

A refusal under ``jit`` raises from the host (the one branch of the step's guard that calls Python),
before envpool is touched; the failed call consumed the pool's step counter (a donated JAX Ref), so
the refusal restores it first (``Bound.revive``): the state passed in still steps, exactly as before.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.custom_batching import custom_vmap

from envhub.plugin import ActionError, ClosedEnvironmentError, HostVmapError, StaleStateError, spaces


@dataclasses.dataclass(frozen=True)
class Refusal:
    """Host side of ``XlaPath.fail``: raise the error the pool's counter (or the action) calls for.

    Called with the state's step, the pool's newest, and (when ``action_tree`` is set) the action's
    leaves, which ``check`` (``envhub.core.action_check.host_value_checker``) checks when the step is the
    newest. Returns 0 when nothing is wrong (the in-program test is allowed to be cautious).
    """

    env_id: str
    op: str
    action_tree: Any = None  # the action's treedef when the step's action values are checked here

    bound: Any = dataclasses.field(default=None, compare=False, repr=False)  # the Bound, revived on a refusal
    check: Callable[[Any], None] | None = dataclasses.field(default=None, compare=False, repr=False)

    def __call__(self, step: np.ndarray, newest: np.ndarray, *action: np.ndarray) -> Any:
        if int(newest) < 0:
            raise ClosedEnvironmentError(self.env_id, self.op)
        try:
            if int(step) != int(newest):
                raise StaleStateError(self.env_id, int(step), int(newest))
            if self.check is not None and self.action_tree is not None:
                self.check(jax.tree.unflatten(self.action_tree, action))  # ActionError: nothing was stepped
        except (StaleStateError, ActionError):
            if self.bound is not None:
                self.bound.revive(int(newest))  # the newest state (the one given, for an ActionError) steps on
            raise
        return np.int32(0)


class ValueCheck(NamedTuple):
    """How a traced fast-path step checks action values: ``envhub.plugin.any_invalid`` in the program, and
    ``check`` (``envhub.core.action_check.host_value_checker(env_id, space)``) on the host."""

    space: spaces.Space
    check: Callable[[Any], None]


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


__all__ = ["Refusal", "ValueCheck", "refuse_vmap"]
