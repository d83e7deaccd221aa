"""envhub backend for envpool: every envpool task, stepped through envpool's XLA FFI calls inside jit.

envpool is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast
(``envhub list`` reads the XLA-path status from envpool's files without importing it).
"""

from __future__ import annotations

import functools
from typing import Any

import envhub
import envhub.plugin
from envhub_envpool.pool import RESERVED

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

__all__ = ["AsyncEnvpool", "make_envpool_env"]


def __getattr__(name: str) -> Any:
    if name == "AsyncEnvpool":  # lazily: importing the plugin must not import envpool
        from envhub_envpool.actor import AsyncEnvpool

        return AsyncEnvpool
    raise AttributeError(f"module 'envhub_envpool' has no attribute {name!r}")


# How the conformance kit drives each task (fields of envhub.testing.Options): "*" for every task,
# a task's name for its own (envhub.check_options_for merges the two).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {"*": {"time_limit_kwarg": "max_episode_steps"}}

_DESCRIPTION = "envpool (host pool; XLA FFI fast path inside jit, same-step auto-reset)"


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every task envpool lists (Atari and MuJoCo included: their assets ship in the wheels)."""
    from envhub_envpool._shim import import_envpool

    envpool = import_envpool()
    for name in envpool.list_all_envs():
        register(
            name,
            functools.partial(make_envpool_env, name),
            batching="native",
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            description=_DESCRIPTION,
            kwargs=functools.partial(accepted_kwargs, name),
        )


@envhub.hookimpl
def envhub_backend_note() -> str | None:
    """The XLA-path status ``envhub list`` prints (without importing envpool)."""
    from envhub_envpool._shim import predicted_status

    return predicted_status() or None


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("envpool/<name>", ...)`` accepts: envpool's config keys of that task (``make_spec``), with
    their defaults, and ``fast_path``; the keys envhub sets are refused with the fix."""
    from envhub_envpool._shim import import_envpool

    config = import_envpool().make_spec(name).config._asdict()
    infer, limit = envhub.plugin.infer_type, config.pop("max_episode_steps", None)
    return {
        **{k: envhub.Kwarg(infer(v), v, "envpool config") for k, v in config.items() if k not in RESERVED},
        envhub.plugin.TIME_LIMIT_KWARG: envhub.Kwarg(int, limit, "steps after which an episode is truncated"),
        "fast_path": envhub.Kwarg(bool, True, "False forces the host bridge instead of envpool's XLA calls"),
        **{k: envhub.Kwarg(refused=f"envhub sets it: {fix}") for k, fix in RESERVED.items()},
    }


def make_envpool_env(name: str, num_envs: int | None = None, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build envpool task ``name`` as one pool of ``num_envs`` (or 1, unbatched) environments.

    ``fast_path=False`` forces the host bridge; every other kwarg (``max_episode_steps``,
    ``episodic_life``, ``reward_clip``, ``stack_num``, ``frame_skip``, ...) goes to ``envpool.make``.
    """
    from envhub_envpool.environment import EnvpoolEnvironment

    return EnvpoolEnvironment(name, num_envs=num_envs, **kwargs)
