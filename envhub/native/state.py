"""``JaxState``: the state of every ``JaxEnvironment``: the backend's own, the episode's step count, resets, params."""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, TypeVar

import jax
import jax.numpy as jnp

from envhub.core.tree import select

S = TypeVar("S")


@dataclasses.dataclass(frozen=True)
class JaxState(Generic[S]):
    """The state of a ``JaxEnvironment`` (every leaf leads with ``num_envs`` when batched).

    Params are kept so that a step never writes them: an episode's params are ``next_params`` from its start
    until ``set_params`` changes that env's ``next_params``, and ``prior_params`` after. Unchanged params are
    then loop-invariant in a scan (no per-step copy or select of every leaf), which keeps params as data as
    cheap as compile-time constants (benchmarks/params_rollout.py).

    Attributes:
        env: The backend's own state.
        steps: int32 steps taken in the current episode.
        first: ``reset_mode="cached"`` only: ``(env, obs)`` every episode restarts from; else ``None``.
        spares: ``reset_spares`` only: spare initial ``(env, obs)`` pairs (``envhub.native.resets.Spares``); else ``None``.
        next_params: the params each env's next episode starts with (``set_params``); ``None`` for an env without
            params. ``default_params``' structure, leaves leading with ``num_envs`` when batched.
        prior_params: the params of the envs whose running episode started before their ``next_params`` were last
            set (``on_next`` false); ``None`` likewise.
        on_next: bool per env: its running episode uses ``next_params``; ``None`` likewise.
    """

    env: S
    steps: jax.Array
    first: Any = None
    spares: Any = None
    next_params: Any = None
    prior_params: Any = None
    on_next: Any = None

    @property
    def params(self) -> Any:
        """The params of each env's running episode (``None`` for an env without params)."""
        if self.next_params is None or isinstance(self.on_next, jax.ShapeDtypeStruct):
            return self.next_params  # None, or (a state from jax.eval_shape) the same shapes
        return select(self.on_next, self.next_params, self.prior_params)

    def running_on(self, params: Any) -> JaxState[S]:
        """This state with every env's running and next episodes on ``params`` (laid out as ``next_params``)."""
        on_next = None if params is None else jnp.ones(jnp.shape(self.steps), jnp.bool_)
        return dataclasses.replace(self, next_params=params, prior_params=params, on_next=on_next)


jax.tree_util.register_dataclass(
    JaxState,
    data_fields=["env", "steps", "first", "spares", "next_params", "prior_params", "on_next"],
    meta_fields=[],
)


__all__ = ["JaxState"]
