"""The envpool config keys envhub sets itself, in one place: what is refused, and the one call that sets them."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from envhub.plugin import InvalidArgumentError

# envpool config keys envhub sets itself, and what to do instead.
RESERVED = {
    "num_envs": "pass num_envs= to envhub.make",
    "batch_size": "envhub steps the whole pool (batch_size = num_envs)",
    "seed": "seeds come from the key given to init/reset: pass jax.random.key(SEED) there",
    "env_seed": "seeds come from the key given to init/reset: pass jax.random.key(SEED) there",
    "env_type": "envhub picks envpool's gymnasium interface",
}


def refuse_reserved(env_id: str, kwargs: dict[str, Any]) -> None:
    """Raise ``InvalidArgumentError`` where ``kwargs`` sets a key of ``RESERVED``, with what to do instead."""
    for key, fix in RESERVED.items():
        if key in kwargs:
            raise InvalidArgumentError(f"{key}={kwargs[key]!r} for {env_id}: envhub sets it: {fix}; remove it.")


def make_pool(task: str, *, num_envs: int, batch_size: int, seeds: Sequence[Any], **kwargs: Any) -> Any:
    """``envpool.make(task, **kwargs)`` with the ``RESERVED`` keys set by envhub (one seed per envpool env)."""
    from envhub_envpool._shim import import_envpool

    pool = import_envpool().make(
        task,
        env_type="gymnasium",
        num_envs=num_envs,
        batch_size=batch_size,
        env_seed=[int(s) & 0x7FFFFFFF for s in seeds],
        **kwargs,
    )
    with warnings.catch_warnings():
        # envpool builds its float32 Boxes from float64 bounds, and gymnasium warns that it lowered their precision
        # (a UserWarning per bound): nothing the user can change. The pool builds its spaces once, on its first recv;
        # built here, only that warning dropped.
        warnings.filterwarnings("ignore", message=".*precision lowered by casting", category=UserWarning)
        pool.observation_space, pool.action_space  # noqa: B018
    return pool
