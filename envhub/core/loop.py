"""An env stepped from Python on NumPy arrays, with no compiled call per step: ``Environment.host_loop()``.

A backend whose environments live in this process (envpool, gymnasium, ALE) may return a ``Loop`` from
``_host_loop()``: ``reset(key)`` starts every env anew with the seeds ``init(key)`` would give them, ``step(action)``
steps every env (same-step auto-reset), each returning the ``TimeStep`` as read-only NumPy arrays of the env's
declared shapes and dtypes: the same episodes as ``init`` and ``step`` for the same key and actions. The loop keeps
its own emulators or host envs, apart from the states ``init`` hands out. The Sebulba factory steps such envs so.

``host_loop()`` returns the backend's loop inside a ``CheckedLoop``, the one home of the rules every loop shares: a
closed env is refused (``ClosedEnvironmentError``), a step before the first reset too (``InvalidArgumentError``),
and the action is checked by ``env.step``'s rule on the host (``ActionError``; ``validate_actions=False`` skips the
values) and cast to the space's dtypes before the backend sees it: a refused action steps nothing.
"""

from __future__ import annotations

from typing import Any, Protocol

import jax

from envhub.core.action_check import host_action_checker
from envhub.core.types import TimeStep
from envhub.errors import InvalidArgumentError


class Loop(Protocol):
    """What a backend's ``_host_loop()`` returns (see the module)."""

    def reset(self, key: jax.Array) -> TimeStep[Any]:
        """Start every env anew, seeded from ``key`` as ``init(key)`` seeds them; the first TimeStep."""

    def step(self, action: Any) -> TimeStep[Any]:
        """Step every env with ``action`` (checked and cast already), auto-resetting ended ones in the same step."""


class CheckedLoop:
    """``Environment.host_loop()``'s result: the backend's ``Loop`` behind the checks every loop shares."""

    def __init__(self, env: Any, loop: Loop):  # env: the Environment (envhub.core.env imports this module)
        self.env, self.loop, self._started = env, loop, False
        self._check_action = host_action_checker(env.id, env.action_space)

    def reset(self, key: jax.Array) -> TimeStep[Any]:
        """Start every env anew with seeds drawn from ``key`` (as ``env.init(key)``); the first TimeStep."""
        self.env._check_open("reset")
        ts = self.loop.reset(key)
        self._started = True
        return ts

    def step(self, action: Any) -> TimeStep[Any]:
        """Step every env (auto-resetting ended ones in the same step); the TimeStep, read-only NumPy arrays.

        Raises:
            ActionError: ``action`` is one ``env.step`` refuses (by its rule, before anything runs).
            InvalidArgumentError: ``step`` before ``reset``; ClosedEnvironmentError: the env is closed.
        """
        self.env._check_open("step")
        if not self._started:
            raise InvalidArgumentError(
                f"step() of the host loop of {self.env.id!r} before reset(): call reset() first."
            )
        return self.loop.step(self._check_action(action, bool(self.env.validate_actions)))

    def __repr__(self) -> str:
        return f"<host loop of {self.env!r}>"


__all__ = ["CheckedLoop", "Loop"]
