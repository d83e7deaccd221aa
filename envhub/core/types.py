"""The data of the API: the ``TimeStep`` of every ``init``/``reset``/``step``, the backends' step records, host state."""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, TypeVar

import jax
import jax.numpy as jnp

Obs = TypeVar("Obs")
PyTree = Any


@dataclasses.dataclass(frozen=True)
class TimeStep(Generic[Obs]):
    """What the agent sees after ``init``, ``reset`` or ``step``.

    Attributes:
        obs: The observation to act on next (after an auto-reset: the new episode's first).
        reward: float32 reward of this step (0 after init/reset); in a multi-agent env, a dict of them
            keyed by ``env.agents``.
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
        """Build the TimeStep of any step: float32 reward, bool flags, and the flag rule (``truncated_unless_terminated``).

        The auto-reset step is one too: ``obs`` the next episode's first where an episode ended,
        ``final_obs`` the observation reached.
        """
        terminated = jnp.asarray(terminated, jnp.bool_)
        truncated = truncated_unless_terminated(terminated, jnp.asarray(truncated, jnp.bool_))
        reward = jax.tree.map(lambda r: jnp.asarray(r, jnp.float32), reward)
        return cls(obs, reward, terminated, truncated, final_obs, info)

    @classmethod
    def termination(cls, obs: Obs, reward: Any, info: dict[str, Any], final_obs: Obs | None = None) -> TimeStep[Obs]:
        """Build the TimeStep of a step that reached a terminal state (every env of the batch).

        With auto-reset, ``obs`` is the next episode's first and ``final_obs`` the reached one;
        without, leave ``final_obs`` out (it is ``obs``).
        """
        flags = jnp.ones(jnp.shape(reward), jnp.bool_)
        return cls.transition(obs, reward, flags, ~flags, obs if final_obs is None else final_obs, info)

    @classmethod
    def truncation(cls, obs: Obs, reward: Any, info: dict[str, Any], final_obs: Obs | None = None) -> TimeStep[Obs]:
        """Build the TimeStep of a step cut by a time limit (every env of the batch); ``obs``/``final_obs`` as in ``termination``."""
        flags = jnp.ones(jnp.shape(reward), jnp.bool_)
        return cls.transition(obs, reward, ~flags, flags, obs if final_obs is None else final_obs, info)

    @classmethod
    def first(
        cls, obs: Obs, info: dict[str, Any], batch_shape: tuple[int, ...] = (), reward: Any = None
    ) -> TimeStep[Obs]:
        """Build the TimeStep of a new episode: zero reward, no flags, ``final_obs = obs``.

        ``reward``: the structure of a step's reward when it is not one array (a dict per agent).
        """
        zero = lambda _: jnp.zeros(batch_shape, jnp.float32)  # noqa: E731
        return cls(
            obs=obs,
            reward=zero(None) if reward is None else jax.tree.map(zero, reward),
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
    """The JAX side of a host environment: which one (``handle``) and which of its states (``version``)."""

    handle: jax.Array  # int32; shape () unbatched, (num_envs,) batched (all equal)
    version: jax.Array  # int32; init is 0, every reset/step adds 1; only the newest may be stepped


jax.tree_util.register_dataclass(HostState, data_fields=["handle", "version"], meta_fields=[])


@dataclasses.dataclass(frozen=True)
class _KeywordsOnly:
    """Base of the step records: fields are given by name, so a swapped field cannot pass as a wrong value."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if args:
            fields = ", ".join(f"{f.name}=..." for f in dataclasses.fields(cls))
            raise TypeError(
                f"{cls.__name__} takes keyword arguments only, got {len(args)} positional; "
                f"write {cls.__name__}({fields})."
            )
        return super().__new__(cls)


@dataclasses.dataclass(frozen=True, kw_only=True)
class JaxStep(_KeywordsOnly):
    """What a ``JaxEnvironment``'s ``_step_one`` returns for one environment, before any reset (keywords only).

    ``JaxStep(state=..., obs=..., reward=..., terminated=..., truncated=..., info=...)``: ``truncated``
    is the backend's own truncation (``False`` if it has none); the base adds its time limit.
    """

    state: Any
    obs: Any
    reward: Any
    terminated: Any
    truncated: Any
    info: dict[str, Any]


@dataclasses.dataclass(frozen=True, kw_only=True)
class HostStep(_KeywordsOnly):
    """What a host environment's ``_host_step`` returns: NumPy values with a leading axis of ``n`` sub-envs.

    ``HostStep(obs=..., reward=..., terminated=..., truncated=..., final_obs=..., info=...)`` (keywords
    only), in same-step auto-reset form: where a sub-env ended, ``obs`` is its next episode's first
    observation and ``final_obs`` the one it reached. Values are cast to the declared spaces;
    ``truncated`` where ``terminated`` is dropped (terminated wins); missing ``info`` keys become zeros.
    """

    obs: Any
    reward: Any
    terminated: Any
    truncated: Any
    final_obs: Any
    info: dict[str, Any]


jax.tree_util.register_dataclass(  # a pytree: _step_one runs under vmap
    JaxStep, data_fields=["state", "obs", "reward", "terminated", "truncated", "info"], meta_fields=[]
)
jax.tree_util.register_dataclass(
    HostStep, data_fields=["obs", "reward", "terminated", "truncated", "final_obs", "info"], meta_fields=[]
)


__all__ = ["HostState", "HostStep", "JaxStep", "TimeStep", "truncated_unless_terminated"]
