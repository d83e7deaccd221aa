"""What ``make("gymnasium/<id>", ...)`` accepts: the env's constructor, its registered kwargs, gymnasium's and envhub's own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import gymnasium

from envhub.plugin import OTHERS, Kwarg, from_signature, infer_type, time_limit_kwargs
from envhub_gymnasium.quiet import load_env_creator

VECTORIZATION_MODES = ("sync", "async", "vector_entry_point")


def declared_kwargs(name: str) -> dict[str, Kwarg]:
    """The constructor's arguments of gymnasium ``name`` (its registered kwargs as defaults), ``render_mode``,
    the time limit, ``disable_env_checker``, and envhub-gymnasium's ``vectorization_mode`` and ``info_keys``."""
    spec = gymnasium.spec(name)
    entry = spec.entry_point
    try:
        creator = entry if callable(entry) else load_env_creator(entry)
    except Exception:  # noqa: BLE001 - make() reports an unloadable env with its own error
        return {OTHERS: Kwarg(doc="its class could not be loaded to read them")}
    found, more = from_signature(creator, skip=("render_mode",))
    for key, value in spec.kwargs.items():  # the registration's values are the defaults make uses
        found[key] = Kwarg(found[key].type if key in found else infer_type(value), value)
    modes: tuple[Any, ...] = tuple(getattr(creator, "metadata", {}).get("render_modes", ()))
    declared = {
        **found,
        "render_mode": Kwarg(
            Literal[modes] | None if modes else None,  # type: ignore[valid-type]
            "rgb_array" if "rgb_array" in modes else None,
            "gymnasium's render mode; envhub draws with 'rgb_array'",
        ),
        **time_limit_kwargs(spec.max_episode_steps),
        "disable_env_checker": Kwarg(bool | None, None, "gymnasium's env checker (sync and async vector envs)"),
        "vectorization_mode": Kwarg(
            Literal[VECTORIZATION_MODES] | None,
            None,
            "gymnasium's vectorizer (None: the fastest that resets in the same step)",
        ),
        "info_keys": Kwarg(Sequence[str] | None, None, "keep only these info keys (() for none)"),
    }
    if more:
        declared[OTHERS] = Kwarg(doc="passed to the env's constructor")
    return declared


__all__ = ["VECTORIZATION_MODES", "declared_kwargs"]
