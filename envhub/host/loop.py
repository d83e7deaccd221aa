"""``HostLoop``: a host environment stepped from Python on NumPy arrays, with no JAX call per step.

The exports that drive an env from Python (the Sebulba factory) go through a compiled call per step
(``envhub.interop.compiled.Runner``); for a ``HostEnvironment`` that call only reaches the host again,
through a callback. ``HostLoop`` skips the round trip: it runs the bridge's host side directly
(``HostBridge.run``, the same code the callback runs, with the same checks, errors and same-step
auto-reset) and returns the ``TimeStep`` as read-only NumPy arrays of the env's declared shapes and dtypes: copies of
what the backend returned, or, for a backend whose arrays are new on every call (``host_arrays_owned``), those
arrays themselves (one value the backend returns in two places, ``obs`` and ``final_obs`` where no episode ended,
is then one array in both).
It owns one live host env of ``env`` (made by the first ``reset``) and keeps its state itself.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.core.action_check import host_action_checker
from envhub.core.types import TimeStep
from envhub.errors import ClosedEnvironmentError, InvalidArgumentError
from envhub.host import callback as host_callback
from envhub.host.bridge import result_struct
from envhub.host.environment import HostEnvironment, key_to_seeds


class HostLoop:
    """``reset(key)`` and ``step(action)`` of one live host env of ``env``, on NumPy arrays (see the module)."""

    def __init__(self, env: HostEnvironment):
        self.env = env
        self._bridge = env._bridge
        self._state: tuple[np.ndarray, np.ndarray] | None = None  # (handle, version) of the live host env
        self._check_action = host_action_checker(env.id, env.action_space)
        struct = result_struct(env, ())
        self._leaves = jax.tree.leaves(struct)
        self._treedef = jax.tree.structure(struct)

    def reset(self, key: jax.Array) -> TimeStep[Any]:
        """Start every sub-env anew with seeds drawn from ``key`` (as ``env.init(key)``); the first TimeStep."""
        seeds = np.asarray(key_to_seeds(key, self.env._num_seeds()))
        if self._state is None:
            return self._run("init", None, None, seeds)
        return self._run("reset", *self._state, seeds)

    def step(self, action: Any) -> TimeStep[Any]:
        """Step every sub-env (auto-resetting finished ones in the same step).

        Raises:
            ActionError: ``action`` is one ``env.step`` refuses (by its rule, before anything runs).
            InvalidArgumentError: ``step`` before ``reset``.
        """
        if self._state is None:
            raise InvalidArgumentError(f"step() of the export of {self.env.id!r} before reset(): call reset() first.")
        action = self._check_action(action, bool(self.env.validate_actions))
        return self._run("step", *self._state, action)

    def _run(self, op: str, handle: Any, version: Any, payload: Any) -> TimeStep[Any]:
        if self.env.closed:
            raise ClosedEnvironmentError(self.env.id, op)
        values = self._bridge.run(op, handle, version, payload)
        owned = self.env.host_arrays_owned  # else copied: the backend may write its buffers again on its next step
        leaves = [_read_only(v, s, owned) for v, s in zip(values, self._leaves)]
        state, ts = jax.tree.unflatten(self._treedef, leaves)
        self._state = (state.handle, state.version)
        return ts


def _read_only(value: Any, struct: jax.ShapeDtypeStruct, owned: bool) -> np.ndarray:
    """``value`` as a read-only array of ``struct``'s shape and dtype, a copy unless ``owned`` (a value handed out in
    two places stays one array)."""
    if owned and type(value) is np.ndarray and value.dtype == struct.dtype and value.shape == struct.shape:
        out = value  # the common case: the backend's own new array, handed out as it is
    else:
        value = host_callback.exact(value, struct)
        out = value.view() if owned else np.array(value, copy=True)
    out.flags.writeable = False
    return out


__all__ = ["HostLoop"]
