"""``JaxState``: the state of every ``JaxEnvironment``: the backend's own, the episode's step count, resets, params."""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, TypeVar

import jax

S = TypeVar("S")


@dataclasses.dataclass(frozen=True)
class JaxState(Generic[S]):
    """The state of a ``JaxEnvironment`` (every leaf leads with ``num_envs`` when batched).

    Attributes:
        env: The backend's own state.
        steps: int32 steps taken in the current episode.
        first: ``reset_mode="cached"`` only: ``(env, obs)`` every episode restarts from; else ``None``.
        spares: ``reset_spares`` only: spare initial ``(env, obs)`` pairs (``envhub.native.resets.Spares``); else ``None``.
        params: the params of each env's current episode (``default_params``' structure, leaves leading
            with ``num_envs`` when batched); ``None`` for an env without params.
        next_params: the params each env's next episode starts with (``set_params``); ``None`` likewise.
    """

    env: S
    steps: jax.Array
    first: Any = None
    spares: Any = None
    params: Any = None
    next_params: Any = None


jax.tree_util.register_dataclass(
    JaxState, data_fields=["env", "steps", "first", "spares", "params", "next_params"], meta_fields=[]
)


__all__ = ["JaxState"]
