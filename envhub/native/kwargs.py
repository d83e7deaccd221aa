"""The make kwargs ``JaxEnvironment`` owns: the time limit (and a backend's alias for it), ``reset_mode``, ``reset_spares``."""

from __future__ import annotations

from typing import Any, Literal

from envhub.core.arguments import positive_int
from envhub.core.kwargs import TIME_LIMIT_KWARG, Kwarg, time_limit_kwargs
from envhub.errors import InvalidArgumentError

RESET_MODES = ("real", "cached")


def take_time_limit(kwargs: dict[str, Any], native: str, default: Any) -> Any:
    """Pop the time limit from make ``kwargs``: ``max_episode_steps``, or the backend's ``native`` name (an alias).

    Raises:
        InvalidArgumentError: both names were given.
    """
    given = [name for name in (TIME_LIMIT_KWARG, native) if name in kwargs]
    if len(given) == 2:
        raise InvalidArgumentError(
            f"{TIME_LIMIT_KWARG}={kwargs[TIME_LIMIT_KWARG]!r} and {native}={kwargs[native]!r} both set the time limit; "
            f"pass only {TIME_LIMIT_KWARG} ({native} is the backend's own name for it)."
        )
    return kwargs.pop(given[0]) if given else default


def jax_kwargs(time_limit: int | None, native: str = "") -> dict[str, Kwarg]:
    """The make kwargs this base owns, to declare for a backend built on it: the time limit (``native``: the
    backend's own name, an alias), ``reset_mode`` and ``reset_spares``."""
    return {
        **time_limit_kwargs(time_limit, native),
        "reset_mode": Kwarg(Literal["real", "cached"], "real", "'cached': every episode restarts from the first state"),
        "reset_spares": Kwarg(bool | None, None, "batched real resets: keep spare initial states (default)"),
    }


def check_arguments(
    num_envs: Any, max_episode_steps: Any, reset_mode: Any, reset_chunk: Any
) -> tuple[int | None, int | None, int | None]:
    """Refuse a bad ``num_envs``, time limit, ``reset_mode`` or ``reset_chunk`` of a ``JaxEnvironment``.

    Returns ``(num_envs, max_episode_steps, reset_chunk)`` as ``positive_int`` returns them (Python ints).
    """
    num_envs = positive_int("num_envs", num_envs, none="one environment")
    max_episode_steps = positive_int(TIME_LIMIT_KWARG, max_episode_steps, none="no limit")
    if reset_mode not in RESET_MODES:
        raise InvalidArgumentError(f"reset_mode={reset_mode!r}: use one of {RESET_MODES}.")
    return num_envs, max_episode_steps, positive_int("reset_chunk", reset_chunk, none="all at once")


__all__ = ["RESET_MODES", "check_arguments", "jax_kwargs", "take_time_limit"]
