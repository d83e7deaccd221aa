"""Loading a gymnasium env class without the warnings its extension modules give on import that tell a user nothing."""

from __future__ import annotations

import warnings
from typing import Any

from gymnasium.envs.registration import load_env_creator as _load_env_creator


def load_env_creator(entry: str) -> Any:
    """gymnasium's ``load_env_creator``, with Box2D's SWIG import warnings (only those) dropped."""
    with warnings.catch_warnings():
        # Box2D's SWIG-built extension (LunarLander, BipedalWalker, CarRacing) defines types without __module__, and
        # Python 3.11+ warns about each as the module is imported (e.g. "builtin type SwigPyPacked has no __module__
        # attribute"): the wheel's build to change, nothing the user can do; the envs run the same without it.
        warnings.filterwarnings(
            "ignore", message=r"builtin type (SwigPy\w+|swigvarlink) has no __module__", category=DeprecationWarning
        )
        return _load_env_creator(entry)
