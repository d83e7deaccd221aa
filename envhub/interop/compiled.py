"""The envhub side of the gymnasium exports: a key stream and one compiled call per step (no gymnasium).

``Runner`` keeps the key and the state on the device; ``step`` is one jitted call that splits the
key, steps (envhub auto-resets in the same step) and returns the outputs, which come back as
writable NumPy arrays through one transfer (``packing``). The jitted functions belong to the runner, so
an export compiles once and never retraces for the same action dtype.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.core.action_check import host_action_checker
from envhub.core.env import Environment, values_checked_by_caller
from envhub.core.loop import CheckedLoop
from envhub.errors import ClosedEnvironmentError, InvalidArgumentError
from envhub.interop.flags import checked_seed
from envhub.interop.packing import Packer


def seed_key(seed: Any) -> jax.Array:
    """A key from an int seed, or from a list of per-env seeds (gymnasium's vector ``reset(seed=[...])``), by the
    seed rule (``envhub.interop.flags.checked_seed``)."""
    seed = checked_seed(seed, none=True)
    if isinstance(seed, list):
        return jax.random.key(int(np.random.SeedSequence(seed).generate_state(1, np.uint32)[0]))
    return jax.random.key(seed)


class Runner:
    """An envhub env driven from Python: ``reset`` and ``step`` return host outputs; key and state stay on device.

    Key and state travel as one packed buffer, the TimeStep comes back as another (``packing``):
    a compiled call per step with two arguments and two results, and one transfer.
    """

    def __init__(self, env: Environment[Any, Any, Any], seed: int):
        self.env = env
        self.key = seed_key(seed)
        self.carry: Any = None  # the packed (key, state)
        self._carry: Packer | None = None
        self._out: dict[str, Packer] = {}  # per function, the TimeStep's layout (recorded while tracing)

        def init(key: jax.Array) -> Any:
            key, sub = jax.random.split(key)
            state, ts = env.init(sub)
            self._carry = Packer((key, state))
            return self._finish("init", key, state, ts)

        def step(carry: Any, action: Any) -> Any:
            key, state = self._unpack(carry)
            key, sub = jax.random.split(key)
            with values_checked_by_caller(env):  # checked on the host by step(), with a plain ActionError
                state, ts = env.step(sub, state, action)
            return self._finish("step", key, state, ts)

        def reset_where(carry: Any, where: jax.Array) -> Any:
            key, state = self._unpack(carry)
            key, sub = jax.random.split(key)
            state, ts = env.reset(sub, state, where=where)
            return self._finish("reset_where", key, state, ts)

        self._check_action = host_action_checker(env.id, env.action_space)
        self._init = jax.jit(init)
        self._step = jax.jit(step)
        self._reset_where = jax.jit(reset_where)

    def _unpack(self, carry: Any) -> Any:
        assert self._carry is not None
        return self._carry.unpack(carry)

    def _finish(self, name: str, key: jax.Array, state: Any, ts: Any) -> tuple[Any, Any]:
        assert self._carry is not None
        carry = Packer((key, state))
        if carry.leaves != self._carry.leaves or carry.treedef != self._carry.treedef:
            raise InvalidArgumentError(f"{self.env.id!r}: {name} returned a state of another structure than init's.")
        self._out[name] = Packer(ts)
        return self._carry.pack((key, state)), self._out[name].pack(ts)

    def _host(self, name: str, out: Any) -> Any:
        return self._out[name].unpack_host(out)

    def reset(self, seed: Any = None) -> Any:
        """Start every env from scratch; the first TimeStep on the host."""
        self._check_open("reset")
        if seed is not None:
            self.key = seed_key(seed)
        self.key, sub = jax.random.split(self.key)
        self.carry, out = self._init(sub)
        return self._host("init", out)

    def reset_where(self, where: np.ndarray) -> Any:
        """Start new episodes where ``where``; the TimeStep on the host (its other entries unspecified)."""
        self.check_started("reset")
        self.carry, out = self._reset_where(self.carry, where)
        return self._host("reset_where", out)

    def step(self, action: Any) -> Any:
        """One step of every env (auto-resetting in the same step); the TimeStep on the host.

        Raises:
            ActionError: ``action`` is one ``env.step`` refuses (checked here, on the host, by its rule), before
                anything runs: the export stays usable.
        """
        self.check_started("step")
        action = self._check_action(action, bool(self.env.validate_actions))
        self.carry, out = self._step(self.carry, action)
        return self._host("step", out)

    def render(self) -> Any:
        self.check_started("render")
        return np.asarray(self.env.render(self._unpack(self.carry)[1]))

    def _check_open(self, method: str) -> None:
        if self.env.closed:  # the compiled functions no longer ask the env: the export does
            raise ClosedEnvironmentError(self.env.id, method)

    def check_started(self, method: str) -> None:
        """Raise unless ``reset`` has run (``InvalidArgumentError``) and the env is open (``ClosedEnvironmentError``)."""
        self._check_open(method)
        if self.carry is None:
            raise not_started(self.env.id, method)


class HostRunner:
    """``Runner``'s ``reset`` and ``step`` for an env stepped from Python (``env.host_loop()``, ``envhub.core.loop``: no
    compiled call per step) from the same key stream, so both play the same episodes for the same seeds."""

    def __init__(self, env: Any, loop: CheckedLoop, seed: int):
        self.env, self.key, self._loop, self._started = env, seed_key(seed), loop, False

    def reset(self, seed: Any = None) -> Any:
        """Start every env from scratch (the loop's envs restart); the first TimeStep, NumPy arrays."""
        if seed is not None:
            self.key = seed_key(seed)
        self.key, sub = jax.random.split(self.key)
        ts = self._loop.reset(jax.random.split(sub)[1])  # the key Runner's compiled init hands env.init
        self._started = True
        return ts

    def step(self, action: Any) -> Any:
        """One step of every env (same-step auto-reset); the TimeStep, NumPy arrays (``CheckedLoop.step``'s errors)."""
        if not self._started:
            raise not_started(self.env.id, "step")
        return self._loop.step(action)


def not_started(env_id: str, method: str) -> InvalidArgumentError:
    """The error of an export's ``method`` called before its first ``reset``."""
    return InvalidArgumentError(f"{method}() of the export of {env_id!r} before reset(): call reset() first.")


__all__ = ["HostRunner", "Runner", "not_started", "seed_key"]
