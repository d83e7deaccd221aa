"""The envhub side of the gymnasium exports: a key stream and one compiled call per step (no gymnasium).

``Runner`` keeps the key and the state on the device; ``step`` is one jitted call that splits the
key, steps (envhub auto-resets in the same step) and returns the outputs, which come back as
writable NumPy arrays through one ``jax.device_get``. The jitted functions belong to the runner, so
an export compiles once and never retraces for the same action dtype.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.env import Environment
from envhub.errors import InvalidArgumentError


def to_host(tree: Any) -> Any:
    """A pytree of device arrays as writable NumPy arrays (one transfer for all leaves)."""
    return jax.tree.map(lambda x: np.array(x, copy=True), jax.device_get(tree))


def seed_key(seed: Any) -> jax.Array:
    """A key from an int seed, or from a list of per-env seeds (gymnasium's vector ``reset(seed=[...])``)."""
    if isinstance(seed, (list, tuple, np.ndarray)):
        seed = int(np.random.SeedSequence([int(s) for s in seed]).generate_state(1, np.uint32)[0])
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InvalidArgumentError(f"seed={seed!r} must be an int, a list of ints or None.")
    return jax.random.key(int(seed))


class Runner:
    """An envhub env driven from Python: ``reset`` and ``step`` return host outputs; the state stays on device."""

    def __init__(self, env: Environment[Any, Any, Any], seed: int):
        self.env = env
        self.key = seed_key(seed)
        self.state: Any = None

        def init(key: jax.Array) -> Any:
            key, sub = jax.random.split(key)
            state, ts = env.init(sub)
            return key, state, ts

        def step(key: jax.Array, state: Any, action: Any) -> Any:
            key, sub = jax.random.split(key)
            state, ts = env.step(sub, state, action)
            return key, state, ts

        def reset_where(key: jax.Array, state: Any, where: jax.Array) -> Any:
            key, sub = jax.random.split(key)
            state, ts = env.reset(sub, state, where=where)
            return key, state, ts

        self._init = jax.jit(init)
        self._step = jax.jit(step)
        self._reset_where = jax.jit(reset_where)

    def reset(self, seed: Any = None) -> Any:
        """Start every env from scratch; the first TimeStep on the host."""
        if seed is not None:
            self.key = seed_key(seed)
        self.key, self.state, ts = self._init(self.key)
        return to_host(ts)

    def reset_where(self, where: np.ndarray) -> Any:
        """Start new episodes where ``where``; the TimeStep on the host (its other entries unspecified)."""
        self._check_started()
        self.key, self.state, ts = self._reset_where(self.key, self.state, where)
        return to_host(ts)

    def step(self, action: Any) -> Any:
        """One step of every env (auto-resetting in the same step); the TimeStep on the host."""
        self._check_started()
        self.key, self.state, ts = self._step(self.key, self.state, action)
        return to_host(ts)

    def render(self) -> Any:
        self._check_started()
        return np.asarray(self.env.render(self.state))

    def _check_started(self) -> None:
        if self.state is None:
            raise InvalidArgumentError(f"step() of the export of {self.env.id!r} before reset(): call reset() first.")


__all__ = ["Runner", "seed_key", "to_host"]
