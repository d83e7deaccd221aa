"""Importing mujoco_playground with only its news reaching the user."""

from __future__ import annotations

import warnings
from typing import Any

from envhub.plugin import mujoco_warnings_dropped, printed_lines_dropped

# Lines printed (``print``, not warnings) while mujoco_playground imports, with why each is dropped:
PRINTED_NOTICES = (
    # mujoco.mjx.warp tries warp-lang and prints both lines where it is not installed (playground requires it, but a
    # platform without its wheel, or an install without dependencies, runs on): `impl="warp"` then raises, naming
    # it. A warp that is installed but fails to import still prints its reason.
    r"Failed to import (warp|mujoco_warp): No module named 'warp'",
)

# MuJoCo's compiler warnings while a playground env loads its model, with why each is dropped:
MUJOCO_NOTICES = (
    # dm_control_suite's cheetah.xml (CheetahRun) sets `settotalmass`, which MuJoCo 3.3+ deprecates: the model's to
    # change. MuJoCo's own handler prints it and appends it to MUJOCO_LOG.TXT in the user's working folder.
    r"compiler attribute 'settotalmass' is deprecated",
)


def loaded(registry: Any, name: str, **kwargs: Any) -> Any:
    """``registry.load(name, **kwargs)`` without MuJoCo's ``MUJOCO_NOTICES`` (its other warnings still shown)."""
    with mujoco_warnings_dropped(*MUJOCO_NOTICES):
        return registry.load(name, **kwargs)


def import_registry() -> Any:
    """``mujoco_playground.registry``, imported with what it prints on stderr (stdout stays clean), less the
    ``PRINTED_NOTICES``."""
    with printed_lines_dropped(*PRINTED_NOTICES), warnings.catch_warnings():
        # mujoco_playground imports brax, which imports jaxopt, which warns that it is no longer maintained: the user
        # never calls jaxopt, and only brax could move off it. Only that warning is dropped.
        warnings.filterwarnings("ignore", message=r"JAXopt is no longer maintained", category=DeprecationWarning)
        from mujoco_playground import registry
    return registry
