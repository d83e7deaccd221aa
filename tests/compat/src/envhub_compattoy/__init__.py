"""compattoy: one small JAX-native environment, registered through one hook (envhub plugin API 1)."""

from __future__ import annotations

from typing import Any

from envhub.plugin import Environment, Kwarg, check_options_for, hookimpl, time_limit_kwargs

ENVHUB_API = 1  # the envhub plugin API this plugin is written for

CHECK_OPTIONS: dict[str, dict[str, Any]] = {"*": {"time_limit_kwarg": "max_episode_steps"}}

KWARGS: dict[str, Kwarg] = {
    "size": Kwarg(int, 5, "the count that ends an episode (at least 1)"),
    **time_limit_kwargs(20),
}


@hookimpl
def envhub_register_envs(register: Any) -> None:
    """Tell envhub which environments this backend offers."""
    register(
        "Counter-v0",
        make_counter,
        batching="native",
        description="count up to size",
        check_options=check_options_for(CHECK_OPTIONS, "Counter-v0"),
        kwargs=KWARGS,
    )


def make_counter(**kwargs: Any) -> Environment[Any, Any, Any]:
    """The factory: a size below 1 is the user's bad value, a ``ValueError``."""
    from envhub_compattoy.counter import Counter

    size = kwargs.pop("size", 5)
    if size < 1:
        raise ValueError(f"size must be at least 1, got size={size!r}")
    return Counter(size, **kwargs)
