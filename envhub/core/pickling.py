"""Pickling envs, and the warning when a process forks after JAX started.

An env returned by ``envhub.make`` pickles as its id and make kwargs and is rebuilt by ``make`` on
load (host envs hold processes and generators, JAX envs compiled code: neither travels). A wrapper
pickles as its fields, so a chain pickles when its innermost env was made and its functions are
module-level. Anything else raises ``PicklingUnsupportedError``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from typing import Any

from envhub.errors import ForkAfterJaxWarning, PicklingUnsupportedError

#: The attribute ``envhub.make`` sets on the env it returns: ``(make, env_id, make_kwargs)``.
MADE = "_envhub_made"


def record_make(env: Any, make: Callable[..., Any], env_id: str, kwargs: dict[str, Any]) -> None:
    """Remember how ``env`` was made (``make(env_id, **kwargs)``), so that pickle can make it again."""
    env.__dict__[MADE] = (make, env_id, dict(kwargs))


def reduce_env(env: Any, protocol: int) -> Any:
    """``Environment.__reduce_ex__``: made envs by id and kwargs, wrappers by fields, others refused."""
    made = env.__dict__.get(MADE)
    if made is not None:
        make, env_id, kwargs = made
        if kwargs.get("mesh") is not None:
            raise PicklingUnsupportedError(env, "it is sharded over a mesh, whose devices belong to this process")
        return remake, (make, env_id, kwargs)
    if getattr(type(env), "_pickle_fields", False):
        return object.__reduce_ex__(env, protocol)
    raise PicklingUnsupportedError(
        env, "envhub.make did not build it (a Registry's own make, or from_gymnax/from_brax wrapping your object)"
    )


def remake(make: Callable[..., Any], env_id: str, kwargs: dict[str, Any]) -> Any:
    """Unpickle a made env: ``envhub.make(env_id, **kwargs)`` in this process."""
    return make(env_id, **kwargs)


def jax_started() -> bool:
    """Whether JAX has started a backend (and its threads) in this process."""
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):  # pragma: no cover - a jax without the (private) check
        return False


def warn_on_fork() -> None:
    """The ``os.register_at_fork`` hook: warn when forking after JAX started."""
    if jax_started():
        warnings.warn(
            "os.fork() after JAX started its threads: the child process may hang. Start workers with "
            "context='forkserver' or 'spawn' (gymnasium's AsyncVectorEnv(..., context='forkserver'), "
            "Stable-Baselines3's SubprocVecEnv(..., start_method='forkserver'), "
            "multiprocessing.get_context('forkserver')); envhub envs pickle by id for them.",
            ForkAfterJaxWarning,
            stacklevel=2,
        )


_installed = False


def install_fork_hook() -> None:
    """Register ``warn_on_fork`` once per process (``import envhub`` does; cheap)."""
    global _installed
    if not _installed and hasattr(os, "register_at_fork"):
        os.register_at_fork(before=warn_on_fork)
        _installed = True


__all__ = ["install_fork_hook", "jax_started", "reduce_env", "record_make", "remake", "warn_on_fork"]
