"""Host environments: CPU environments living in this process, behind the functional API, inside jit, scan and vmap.

A ``HostEnvironment`` keeps its live host environments on the host; the JAX-side state is only
``HostState(handle, version)``. ``envhub.host.bridge`` runs the calls: directly when called eagerly,
through one shared host callback (``envhub.host.callback``) when traced, one host env per mapped
state under ``jax.vmap``.

To write one, subclass ``HostEnvironment``, pass the spaces (and the ``info`` structure) to its
``__init__``, and implement ``_host_make``, ``_host_reset`` and ``_host_step`` (plus
``_host_reset_where`` for partial resets, ``_host_render`` to draw), working on NumPy arrays with a
leading axis of ``n = num_envs or 1`` sub-envs.
"""

from __future__ import annotations

import abc
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.env import Environment, checks_values_on_host
from envhub.core.keys import key_to_seeds
from envhub.core.spaces_of_one import SpacesOfOne
from envhub.core.types import HostState, HostStep, TimeStep
from envhub.errors import EnvhubError, InvalidArgumentError, RenderError
from envhub.host.bridge import HostBridge
from envhub.host.loop import HostLoop


class HostEnvironment(SpacesOfOne, Environment[HostState, Any, Any]):
    """Base class of environments living in this process, stepped through a host callback.

    Every host environment is a vector of ``n = num_envs or 1`` sub-environments; unbatched envs
    drop the leading axis.

    Args:
        num_envs: ``None`` for one environment, ``N`` for a batch of ``N``.
        observation_space: The space of one sub-env's observation.
        action_space: The space of one sub-env's action.
        info_spec: Per-sub-env shape and dtype of every ``info`` key kept (missing values become
            zeros); ``None`` for no info.
    """

    is_jax_native = False
    host_arrays_owned = False
    """A backend sets ``True`` where the arrays its ``_host_reset``/``_host_step`` return are new on every call (it never
    writes them again): code stepping it from Python (``envhub.host.loop``) then hands them on without a copy."""

    def __init__(
        self,
        num_envs: int | None = None,
        *,
        observation_space: spaces.Space | None = None,
        action_space: spaces.Space | None = None,
        info_spec: dict[str, jax.ShapeDtypeStruct] | None = None,
    ):
        self.num_envs = num_envs
        self._n = 1 if num_envs is None else num_envs
        self._declare_spaces(observation_space, action_space)
        self._info_spec = dict(sorted((info_spec or {}).items()))
        self._bridge = HostBridge(self)

    # --- what subclasses implement -----------------------------------------------------------

    @abc.abstractmethod
    def _host_make(self) -> Any:
        """Create one host vector environment of ``self._n`` sub-envs; it must have ``close()``."""

    @abc.abstractmethod
    def _host_reset(self, host: Any, seeds: list[int]) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env with its seed; return ``(obs, info)`` with a leading axis of ``n``."""

    @abc.abstractmethod
    def _host_step(self, host: Any, action: Any) -> HostStep:
        """Step every sub-env with its action (leading axis ``n``); auto-reset finished ones in the same step."""

    def _host_reset_where(self, host: Any, seeds: list[int], mask: np.ndarray) -> tuple[Any, dict[str, Any]]:
        """Reset only the sub-envs where ``mask``; return ``(obs, info)`` for all ``n`` (others: current)."""
        raise NotImplementedError(f"{type(self).__name__} cannot reset a subset of its sub-environments")

    def _host_loop(self) -> HostLoop:
        """Stepped from Python: ``envhub.host.loop.HostLoop`` (a live host env of its own, the callback's code)."""
        return HostLoop(self, self._bridge)

    def _host_render(self, host: Any) -> Any:
        """RGB frames ``(n, H, W, 3)`` of every sub-env of ``host``; the default cannot draw."""
        raise RenderError(self.id, f"{type(self).__name__} has no renderer", "record its observations instead")

    # --- spaces and bookkeeping ----------------------------------------------------------------

    @property
    def info_spec(self) -> dict[str, jax.ShapeDtypeStruct]:
        """Per-sub-env shape and dtype of every ``info`` key kept (missing values become zeros)."""
        return self._info_spec

    def live_host_envs(self) -> int:
        """How many host (vector) environments this object keeps alive."""
        table = self._bridge.table
        return len(table.slots) + (table.spare is not None)

    def _keep_spare(self, host: Any) -> None:
        """Hand a host env made early to the first ``init`` (closed with the others if unused)."""
        self._bridge.table.spare = host

    def _close(self) -> None:
        self._bridge.close()

    def _render(self, state: HostState, index: int | None) -> Any:
        """Draw the live host env of ``state`` (which must be its newest state, as for ``step``)."""
        state = _check_state(self, state)
        _, slot = self._bridge.find_slot(np.asarray(state.handle), np.asarray(state.version))
        try:
            frames = np.asarray(self._host_render(slot.host))
        except EnvhubError:
            raise
        except Exception as exc:
            problem = f"its backend raised {type(exc).__name__}: {exc}"
            raise RenderError(self.id, problem, "see the backend's README for what rendering needs") from exc
        return frames[0] if self.num_envs is None else frames if index is None else frames[index]

    def _env_shape(self) -> tuple[int, ...]:
        return () if self.num_envs is None else (self._n,)

    def _num_seeds(self) -> int:
        """How many seeds ``init``/``reset`` hand ``_host_reset`` (one per sub-env unless a backend needs more)."""
        return self._n

    # --- the functional API --------------------------------------------------------------------

    # Host envs have no params (default_params is None): the core never passes ``params``.
    def _init(self, key: jax.Array, params: Any = None) -> tuple[HostState, TimeStep[Any]]:
        return self._bridge.call("init", None, None, key_to_seeds(key, self._num_seeds()))

    def _reset(self, key: jax.Array, state: HostState, params: Any = None) -> tuple[HostState, TimeStep[Any]]:
        state = _check_state(self, state)
        return self._bridge.call("reset", state.handle, state.version, key_to_seeds(key, self._num_seeds()))

    def _step(self, key: jax.Array, state: HostState, action: Any) -> tuple[HostState, TimeStep[Any]]:
        state = _check_state(self, state)
        # traced: the host callback checks the values (free there); eager: step() already did
        return self._bridge.call("step", state.handle, state.version, action, check_values=checks_values_on_host(self))

    def _reset_where(
        self, key: jax.Array, state: HostState, where: jax.Array, params: Any = None
    ) -> tuple[HostState, TimeStep[Any]]:
        state = _check_state(self, state)
        lead = jnp.shape(where)[: jnp.ndim(where) - len(self._env_shape())]
        mask = jnp.reshape(jnp.asarray(where, jnp.bool_), (*lead, self._n))
        seeds = key_to_seeds(key, self._num_seeds())
        return self._bridge.call("reset_where", state.handle, state.version, (seeds, mask))


def _check_state(env: HostEnvironment, state: Any) -> HostState:
    """``state`` if it is a ``HostState``; else ``InvalidArgumentError``, the class a JAX env raises for a wrong state."""
    if not isinstance(state, HostState):
        pair = isinstance(state, tuple) and len(state) == 2 and isinstance(state[0], HostState)
        got = "a (state, ts) pair" if pair else type(state).__name__
        fix = "pass its first item" if pair else "pass the state returned by the previous call"
        raise InvalidArgumentError(f"{env.id!r} needs the HostState returned by init/reset/step, got {got}; {fix}.")
    return state


__all__ = ["HostEnvironment", "HostState", "HostStep", "key_to_seeds"]
