"""The jumanji specs of envhub spaces, and the observations of the Jumanji-API export's multi-agent form (Mava's).

``to_jumanji_spec`` follows ``envhub.interop.leaves``' rule over ``envhub.spaces.convert``: a ``Discrete`` from 0
(any integer dtype, kept) is a ``DiscreteArray``; a ``MultiDiscrete`` from 0 of any shape a ``MultiDiscreteArray``;
another integer space a ``BoundedArray`` with its inclusive bounds; a ``Box`` a ``BoundedArray`` (an ``Array`` where
it is unbounded, as jumanji's own unbounded observations are). A node keeps its type: a NamedTuple is jumanji's
``Spec`` of that type, a dict or tuple a ``Spec`` that validates and generates a dict or tuple (jumanji's own
``Spec.validate`` takes NamedTuples and dataclasses only), so ``spec.validate(obs)`` holds for envhub's observations.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.interop.contract import library_missing
from envhub.interop.leaves import discrete_n, inclusive_bounds, target_space

try:
    from jumanji import specs
except ImportError as exc:  # pragma: no cover - exercised when jumanji is absent
    raise library_missing("to_jumanji", "jumanji", "jumanji") from exc


class Observation(NamedTuple):
    """A multi-agent observation as Mava's systems read it (``mava.types.Observation``'s fields): one row per agent."""

    agents_view: Any  # (num_agents, ...): each agent's own observation
    action_mask: Any  # (num_agents, action_dim) bool: each agent's legal actions (all ones where the env has none)
    step_count: Any  # (num_agents,) int32: the steps of the episode so far


class ObservationGlobalState(NamedTuple):
    """``Observation`` with ``global_state`` (``add_global_state=True``: Mava's centralised critics read it):
    every agent's view, flattened and concatenated, in each agent's row (``mava.types.ObservationGlobalState``)."""

    agents_view: Any
    action_mask: Any
    global_state: Any  # (num_agents, num_agents * features)
    step_count: Any


class MappingSpec(specs.Spec[Any]):  # type: ignore[misc,unused-ignore]
    """A jumanji ``Spec`` of a dict observation: ``validate`` takes a mapping, ``generate_value`` makes a dict."""

    def __init__(self, children: Mapping[str, Any], name: str = ""):
        super().__init__(dict, name, **children)

    def validate(self, value: Any) -> Any:
        if not isinstance(value, Mapping) or set(value) != set(self._specs):
            raise ValueError(f"{value!r:.80} is not a dict with the keys {sorted(self._specs)}.")
        return {k: spec.validate(value[k]) for k, spec in self._specs.items()}


class TupleSpec(specs.Spec[Any]):  # type: ignore[misc,unused-ignore]
    """A jumanji ``Spec`` of a tuple observation (its children named ``"0"``, ``"1"``, ...)."""

    def __init__(self, children: tuple[Any, ...], name: str = ""):
        super().__init__(
            lambda **kw: tuple(kw[str(i)] for i in range(len(kw))), name, **{str(i): c for i, c in enumerate(children)}
        )

    def validate(self, value: Any) -> Any:
        if not isinstance(value, tuple) or len(value) != len(self._specs):
            raise ValueError(f"{value!r:.80} is not a tuple of {len(self._specs)} entries.")
        return tuple(self._specs[str(i)].validate(x) for i, x in enumerate(value))


def to_jumanji_spec(space: spaces.Space, what: str = "the observation space", name: str = "") -> Any:
    """The jumanji spec of an envhub ``space`` (the module docstring's rule); ``what`` names it in a refusal.

    Raises:
        InvalidArgumentError: a leaf has no jumanji counterpart.
    """

    def leaf(sub: spaces.Space) -> Any:
        n = discrete_n(sub)
        if n is not None:
            return specs.DiscreteArray(n, dtype=sub.dtype, name=name)
        if isinstance(sub, spaces.MultiDiscrete) and not sub.start.any():
            return specs.MultiDiscreteArray(np.asarray(sub.nvec, np.int32), dtype=sub.dtype, name=name)
        if isinstance(sub, (spaces.Box, spaces.MultiDiscrete)):
            low, high = inclusive_bounds(sub)
            if sub.dtype.kind == "f" and np.all(np.isneginf(low)) and np.all(np.isposinf(high)):
                return specs.Array(sub.shape, sub.dtype, name=name)
            return specs.BoundedArray(sub.shape, sub.dtype, low, high, name=name)
        return None

    def node(children: Any) -> Any:
        if isinstance(children, dict):
            return MappingSpec(children, name)
        if hasattr(children, "_fields"):
            return specs.Spec(type(children), name or type(children).__name__, **children._asdict())
        return TupleSpec(children, name)

    return target_space("to_jumanji", "jumanji", what, space, leaf, node)


def mask_spec(num_agents: int, action_dim: int) -> Any:
    """The spec of ``Observation.action_mask``."""
    return specs.BoundedArray((num_agents, action_dim), bool, False, True, "action_mask")


def step_count_spec(num_agents: int, time_limit: int) -> Any:
    """The spec of ``Observation.step_count``: from 0 to the time limit."""
    return specs.BoundedArray((num_agents,), np.int32, 0, time_limit, "step_count")


def global_state_spec(view: spaces.Space, num_agents: int) -> Any:
    """The spec of ``ObservationGlobalState.global_state`` for agents' views of space ``view`` (one agent's)."""
    leaves = view.leaves if isinstance(view, spaces.Tree) else [view]
    features = sum(int(np.prod(s.shape)) for s in leaves)
    dtype = jnp.result_type(*[s.dtype for s in leaves])  # as jnp.concatenate promotes them
    return specs.Array((num_agents, num_agents * features), dtype, "global_state")


__all__ = [
    "MappingSpec",
    "Observation",
    "ObservationGlobalState",
    "TupleSpec",
    "global_state_spec",
    "mask_spec",
    "step_count_spec",
    "to_jumanji_spec",
]
