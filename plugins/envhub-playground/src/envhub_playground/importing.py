"""Importing mujoco_playground with only its news reaching the user."""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Any


def import_registry() -> Any:
    """``mujoco_playground.registry``, imported with mujoco's optional-import notices on stderr (stdout stays clean)."""
    with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
        # mujoco_playground imports brax, which imports jaxopt, which warns that it is no longer maintained: the user
        # never calls jaxopt, and only brax could move off it. Only that warning is dropped.
        warnings.filterwarnings("ignore", message=r"JAXopt is no longer maintained", category=DeprecationWarning)
        from mujoco_playground import registry
    return registry
