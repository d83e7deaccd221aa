"""What the bridge (``bridge.HostBridge``) needs of a host environment: ``HostEnvironment`` has it all,
its ``_host_*`` methods filled in by a backend."""

from __future__ import annotations

from typing import Any, Protocol

import jax
import numpy as np

from envhub import spaces
from envhub.core.types import HostStep


class HostHooks(Protocol):
    """One host environment as the bridge drives it (``envhub.HostEnvironment`` documents each hook)."""

    @property
    def id(self) -> str: ...

    @property
    def num_envs(self) -> int | None: ...

    @property
    def closed(self) -> bool: ...

    @property
    def action_space(self) -> spaces.Space: ...

    @property
    def single_observation_space(self) -> spaces.Space: ...

    @property
    def info_spec(self) -> dict[str, jax.ShapeDtypeStruct]: ...

    @property
    def host_arrays_owned(self) -> bool: ...

    def _num_seeds(self) -> int: ...

    def _env_shape(self) -> tuple[int, ...]: ...

    def _host_make(self) -> Any: ...

    def _host_reset(self, host: Any, seeds: list[int]) -> tuple[Any, dict[str, Any]]: ...

    def _host_step(self, host: Any, action: Any) -> HostStep: ...

    def _host_reset_where(self, host: Any, seeds: list[int], mask: np.ndarray) -> tuple[Any, dict[str, Any]]: ...


__all__ = ["HostHooks"]
