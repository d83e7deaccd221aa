"""The data of the API: the ``TimeStep`` of every ``init``/``reset``/``step``, and the host-env structures."""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, NamedTuple, TypeVar

import jax
import jax.numpy as jnp

Obs = TypeVar("Obs")
PyTree = Any


@dataclasses.dataclass(frozen=True)
class TimeStep(Generic[Obs]):
    """What the agent sees after ``init``, ``reset`` or ``step``.

    Attributes:
        obs: The observation to act on next (after an auto-reset: the new episode's first).
        reward: float32 reward of this step (0 after init/reset).
        terminated: The episode reached a terminal state; do not bootstrap.
        truncated: The episode was cut (time limit); bootstrap from ``final_obs``.
        final_obs: The observation this step reached, before any auto-reset; equals ``obs``
            when the episode did not end.
        info: Dict of arrays with the same structure at init, reset and step.
    """

    obs: Obs
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    final_obs: Obs
    info: dict[str, Any]

    @property
    def done(self) -> jax.Array:
        """``terminated | truncated``: the episode ended on this step."""
        return jnp.logical_or(self.terminated, self.truncated)

    def replace(self, **changes: Any) -> TimeStep[Obs]:
        """Return a copy with some fields replaced."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def transition(
        cls, obs: Obs, reward: Any, terminated: Any, truncated: Any, final_obs: Obs, info: dict[str, Any]
    ) -> TimeStep[Obs]:
        """Build the TimeStep of a step: float32 reward, bool flags, and the flag rule (``truncated_unless_terminated``)."""
        terminated = jnp.asarray(terminated, jnp.bool_)
        truncated = truncated_unless_terminated(terminated, jnp.asarray(truncated, jnp.bool_))
        return cls(obs, jnp.asarray(reward, jnp.float32), terminated, truncated, final_obs, info)

    @classmethod
    def first(cls, obs: Obs, info: dict[str, Any], batch_shape: tuple[int, ...] = ()) -> TimeStep[Obs]:
        """Build the TimeStep of a new episode: zero reward, no flags, ``final_obs = obs``."""
        return cls(
            obs=obs,
            reward=jnp.zeros(batch_shape, jnp.float32),
            terminated=jnp.zeros(batch_shape, jnp.bool_),
            truncated=jnp.zeros(batch_shape, jnp.bool_),
            final_obs=obs,
            info=info,
        )


def truncated_unless_terminated(terminated: Any, truncated: Any) -> Any:
    """The flag rule, in one place: a step that reaches a terminal state at its time limit is terminated, not truncated.

    Works on NumPy and JAX bool arrays alike (both must be bool arrays, not Python bools).
    """
    return truncated & ~terminated


jax.tree_util.register_dataclass(
    TimeStep,
    data_fields=["obs", "reward", "terminated", "truncated", "final_obs", "info"],
    meta_fields=[],
)


@dataclasses.dataclass(frozen=True)
class HostState:
    """The JAX side of a host environment: which one (``handle``) and how far it got (``step``)."""

    handle: jax.Array  # int32; shape () unbatched, (num_envs,) batched (all equal)
    step: jax.Array  # int32; init is 0, every reset/step adds 1; the host keeps the newest


jax.tree_util.register_dataclass(HostState, data_fields=["handle", "step"], meta_fields=[])


class HostStep(NamedTuple):
    """What a host environment's ``_host_step`` returns: NumPy values with a leading axis of ``n`` sub-envs.

    Same-step auto-reset form: where a sub-env ended, ``obs`` is its next episode's first
    observation and ``final_obs`` the one it reached. Values are cast to the declared spaces;
    ``truncated`` where ``terminated`` is dropped (terminated wins); missing ``info`` keys become zeros.
    """

    obs: Any
    reward: Any
    terminated: Any
    truncated: Any
    final_obs: Any
    info: dict[str, Any]


__all__ = ["HostState", "HostStep", "TimeStep", "truncated_unless_terminated"]
