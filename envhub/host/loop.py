"""``HostLoop``: a host environment stepped from Python on NumPy arrays, with no JAX call per step (its
``env.host_loop()``, ``envhub.core.loop``).

An export driving an env from Python through a compiled call per step (``envhub.interop.compiled.Runner``) would,
for a ``HostEnvironment``, only reach the host again through a callback. ``HostLoop`` skips the round trip: it runs
the bridge's host side directly (``HostBridge.run``, the same code the callback runs, with the same errors and
same-step auto-reset) and returns the ``TimeStep`` as read-only NumPy arrays of the env's declared shapes and dtypes: copies of
what the backend returned, or, for a backend whose arrays are new on every call (``host_arrays_owned``), those
arrays themselves (one value the backend returns in two places, ``obs`` and ``final_obs`` where no episode ended,
is then one array in both).
It owns one live host env of ``env`` (made by the first ``reset``) and keeps its state itself.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.core.keys import key_to_seeds
from envhub.core.types import TimeStep
from envhub.host import callback as host_callback
from envhub.host.bridge import HostBridge, result_struct
from envhub.host.hooks import HostHooks


class HostLoop:
    """``reset(key)`` and ``step(action)`` of one live host env of ``env`` (its ``bridge``), on NumPy arrays (see the
    module); what ``HostEnvironment._host_loop`` returns (``env.host_loop()`` adds the shared checks: ``envhub.core.loop``)."""

    def __init__(self, env: HostHooks, bridge: HostBridge):
        self.env, self._bridge = env, bridge
        self._state: tuple[Any, Any] = (None, None)  # (handle, version) of the live host env; None before reset
        struct = result_struct(env, ())
        self._leaves = jax.tree.leaves(struct)
        self._treedef = jax.tree.structure(struct)

    def reset(self, key: jax.Array) -> TimeStep[Any]:
        """Start every sub-env anew with seeds drawn from ``key`` (as ``env.init(key)``); the first TimeStep."""
        seeds = np.asarray(key_to_seeds(key, self.env._num_seeds()))
        return self._run("init" if self._state[0] is None else "reset", seeds)

    def step(self, action: Any) -> TimeStep[Any]:
        """Step every sub-env with the checked ``action`` (auto-resetting finished ones in the same step)."""
        return self._run("step", action)

    def _run(self, op: str, payload: Any) -> TimeStep[Any]:
        values = self._bridge.run(op, *self._state, payload)
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
