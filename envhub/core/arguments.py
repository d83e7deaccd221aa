"""Argument checks shared by the core, the wrappers and the plugins: each rule written once."""

from __future__ import annotations

from typing import Any, overload

import numpy as np

from envhub.errors import InvalidArgumentError


@overload
def positive_int(name: str, value: Any, *, none: None = None, where: str = "") -> int: ...
@overload
def positive_int(name: str, value: Any, *, none: str, where: str = "") -> int | None: ...
def positive_int(name: str, value: Any, *, none: str | None = None, where: str = "") -> int | None:
    """Return ``value`` if it is an int >= 1 (a bool is not), or None where ``none`` says what None means.

    A NumPy integer scalar (e.g. from a config array) counts as an int and is returned as a Python ``int``:
    callers keep the returned value.

    Args:
        name: the argument's name, as the caller passes it (``"num_envs"``, ``"max_episode_steps"``).
        value: what was passed.
        none: what None means (``"no limit"``); leave it out where None is refused.
        where: the call it was passed to, shown after the value (``"for TimeLimit"``).

    Returns:
        ``value`` as a Python ``int`` (or None).

    Raises:
        InvalidArgumentError: ``name={value!r} {where}: use None (...) or an int >= 1.``
    """
    if value is None and none is not None:
        return None
    number = int(value) if isinstance(value, np.integer) else value  # np.bool_ is no np.integer: refused, as bool
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        place = f" {where}" if where else ""
        allowed = f"None ({none}) or an int >= 1" if none is not None else "an int >= 1"
        raise InvalidArgumentError(f"{name}={value!r}{place}: use {allowed}.")
    return number


def an_environment(what: str, env: Any) -> None:
    """Refuse an ``env`` that is not an envhub ``Environment`` (an id, a gymnax or gymnasium env) for ``what``.

    Raises:
        InvalidArgumentError: names what was given and how to make an envhub env of it.
    """
    from envhub.core.env import Environment

    if isinstance(env, Environment):
        return
    if isinstance(env, str):
        fix = f"make it first: {what}(envhub.make({env!r}))"
    elif type(env).__module__.split(".")[0] in ("gymnax", "brax"):
        library = type(env).__module__.split(".")[0]
        fix = f"wrap it first: {what}(envhub.interop.from_{library}(env))"
    else:
        fix = f"give an envhub env, e.g. {what}(envhub.make('gymnax/CartPole-v1'))"
    raise InvalidArgumentError(f"{what} takes an envhub Environment, not a {type(env).__name__} ({env!r:.60}); {fix}.")


def single_agent_only(what: str, env: Any, instead: str) -> None:
    """Refuse a multi-agent ``env`` (its reward a dict per agent) for ``what``, which needs one reward per step.

    Raises:
        InvalidArgumentError: ``env.agents`` is not empty; the message says what to do ``instead``.
    """
    if env.agents:
        raise InvalidArgumentError(
            f"{what} needs one reward per step, but {env.id!r} is multi-agent (agents {env.agents}): its reward "
            f"is a dict per agent; {instead} (docs/multi-agent.md)."
        )


__all__ = ["an_environment", "positive_int", "single_agent_only"]
