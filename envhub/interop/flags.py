"""The rule of each flag an export takes, by its name (``FLAGS``: a flag of one name means the same in every export),
and the argument rules the exports share: seeds, render modes, agents, devices and reset masks (docs/interop.md).

Each rule returns the value as the export keeps it, or raises ``InvalidArgumentError`` naming the value and the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from envhub.errors import InvalidArgumentError


def checked_seed(seed: Any, *, none: bool = False) -> Any:
    """``seed`` if it is an int from 0 to 2**63 - 1 (gymnasium's and the CLI's rule), a list of them (one per env,
    gymnasium's vector ``reset(seed=[...])``), or, where ``none``, ``None``; as Python ints."""
    if seed is None and none:
        return None
    if isinstance(seed, (list, tuple, np.ndarray)):
        return [_one_seed(s, seed, none) for s in seed]
    return _one_seed(seed, seed, none)


def _one_seed(seed: Any, given: Any, none: bool) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
        where = "" if seed is given else f" (in seed={given!r})"
        raise InvalidArgumentError(
            f"seed={seed!r}{where} must be an int from 0 to 2**63 - 1{', a list of such ints or None' if none else ''}."
        )
    return int(seed)


def _a_bool(name: str, true: str, false: str) -> Callable[[str, Any, Any], bool]:
    """The rule of a bool flag: ``True`` or ``False`` (NumPy's too), nothing else (1, "yes", None are refused)."""

    def rule(export: str, env: Any, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        raise InvalidArgumentError(f"{export}({name}={value!r}): give True ({true}) or False ({false}).")

    return rule


def _step_returns(export: str, env: Any, value: Any) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value in (5, 6):
        return int(value)
    raise InvalidArgumentError(
        f"{export}(step_returns={value!r}): give 6 for gymnax 1.0's (obs, state, reward, terminated, truncated, info) "
        f"or 5 for the classic (obs, state, reward, done, info) of rejax 0.1.3 and PureJaxRL."
    )


def drawn_modes(env: Any) -> list[str]:
    """The render modes an export of ``env`` offers (its metadata's ``render_modes``): ``rgb_array`` where ``env`` draws."""
    return ["rgb_array"] if "rgb_array" in env.render_modes else []


def known_agent(env_id: str, agents: list[str], agent: Any, method: str) -> str:
    """``agent`` if it is one of ``agents`` (the PettingZoo exports' per-agent calls), else an error naming them."""
    if isinstance(agent, str) and agent in agents:
        return agent
    raise InvalidArgumentError(f"{method}({agent!r}) of {env_id!r}: no such agent; the agents are {agents}.")


def _render_mode(export: str, env: Any, value: Any) -> str | None:
    offered = drawn_modes(env)
    if value is None or (isinstance(value, str) and value in offered):
        return value
    raise InvalidArgumentError(
        f"{export}(render_mode={value!r}): {env.id!r} draws {offered or 'nothing'}; pass one of them or None."
    )


#: The rule of each flag, by its name: a flag of one name means the same in every export.
FLAGS: dict[str, Callable[[str, Any, Any], Any]] = {
    "seed": lambda export, env, value: _one_seed(value, value, False),  # one int: a list is for a vector's reset
    "render_mode": _render_mode,
    "step_returns": _step_returns,
    "keep_final_obs": _a_bool("keep_final_obs", "state.final_observation holds the observations reached", "it is None"),
    "one_hot_actions": _a_bool("one_hot_actions", "OneHot integer actions", "Categorical ones"),
}


def checked_device(export: str, given: Any, device: Any, available: list[str]) -> Any:
    """``device`` (the target library's device made of ``given``; ``None``: it made none) if this install has it."""
    if device is not None and str(device) in available:
        return device
    raise InvalidArgumentError(
        f"{export}(device={given!r}): this install has the devices {available}; pass one of them, or None for the "
        f"JAX device's."
    )


def checked_mask(
    what: str, mask: Any, num_envs: int, shapes: tuple[tuple[int, ...], ...] = (), fix: str = "np.asarray(mask, bool)"
) -> np.ndarray:
    """``mask`` as a NumPy bool array of shape ``(num_envs,)``: a reset mask, given in that shape or one of ``shapes``
    (``what`` names where it was given, ``fix`` how to make one)."""
    try:
        array = np.asarray(mask)
    except (TypeError, ValueError):  # a ragged list
        array = np.asarray(None)
    accepted = ((num_envs,), *[s for s in shapes if s != (num_envs,)])
    if array.dtype == np.bool_ and array.shape in accepted:
        return array.reshape(num_envs)
    shown = " ".join(repr(mask).split())  # one line
    raise InvalidArgumentError(
        f"{what}: the reset mask {shown:.80} (dtype {array.dtype}, shape {array.shape}) must be a bool array of shape "
        f"{' or '.join(map(str, accepted))}, one flag per env; pass e.g. {fix}."
    )


__all__ = ["FLAGS", "checked_device", "checked_mask", "checked_seed", "drawn_modes", "known_agent"]
