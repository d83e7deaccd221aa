"""Same-step auto-reset for gymnasium's NumPy vector envs that only reset on the next step.

gymnasium's ``CartPoleVectorEnv`` (the ``vector_entry_point`` of ``CartPole-v0``/``-v1``) steps all
sub-envs in a few NumPy calls, ~8x faster than the sync vector env at 64 envs, but resets a
finished sub-env on the *next* step, spending that step's action. envhub needs the reset in the
step where the episode ends. For the classes listed here, ``ADAPTERS`` holds a function that does
that reset right after the step, with the env's own reset distribution and random generator, in
vectorized NumPy, and cancels the pending next-step reset. They use the class's attributes, which
``adapter_for`` checks before using one; tests compare the result with gymnasium's own env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: (the env with its sub-env done mask after a step) -> the observations with those sub-envs reset.
Adapter = Callable[[Any, np.ndarray], Any]


def _cartpole(env: Any, done: np.ndarray) -> Any:
    """What ``CartPoleVectorEnv.step`` would do to ``done`` sub-envs on the next step, now."""
    env.state[:, done] = env.np_random.uniform(low=env.low, high=env.high, size=(4, int(done.sum())))
    env.steps[done] = 0
    env.prev_done[:] = False  # the next step is a real step for every sub-env
    return env.state.T.astype(np.float32)


ADAPTERS: dict[str, tuple[tuple[str, ...], Adapter]] = {
    "gymnasium.envs.classic_control.cartpole.CartPoleVectorEnv": (
        ("state", "steps", "prev_done", "low", "high", "np_random"),
        _cartpole,
    ),
}


def has_adapter(cls: type) -> bool:
    """Whether envhub can give this vector env class (exactly it) same-step auto-reset."""
    return _name(cls) in ADAPTERS


def adapter_for(env: Any) -> Adapter | None:
    """The adapter of a reset vector env, if its class has one and the env has every attribute it uses."""
    entry = ADAPTERS.get(_name(type(env)))
    if entry is None or not all(hasattr(env, attribute) for attribute in entry[0]):
        return None
    return entry[1]


def _name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def combined_seed(seeds: list[int]) -> int:
    """One 32-bit seed from the sub-envs' seeds, for a vector env that takes a single seed."""
    return int(np.random.SeedSequence(seeds).generate_state(1, np.uint32)[0])
