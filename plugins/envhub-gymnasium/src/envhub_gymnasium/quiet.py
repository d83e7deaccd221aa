"""Loading and building gymnasium envs without the warnings their libraries give that tell a user nothing."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import gymnasium
from gymnasium.envs.registration import load_env_creator as _load_env_creator

from envhub.plugin import mujoco_warnings_dropped

# MuJoCo's compiler warnings while gymnasium builds a MuJoCo env, with why each is dropped:
MUJOCO_NOTICES = (
    # gymnasium's half_cheetah.xml sets `settotalmass`, which MuJoCo 3.3+ deprecates: the model's to change. MuJoCo's
    # own handler prints it and appends it to MUJOCO_LOG.TXT in the user's working folder, once per sub-env made.
    r"compiler attribute 'settotalmass' is deprecated",
)


def built_quietly(name: str) -> contextlib.AbstractContextManager[None]:
    """While gymnasium builds env ``name``: MuJoCo's ``MUJOCO_NOTICES`` dropped for gymnasium's own MuJoCo envs (the
    only ones that import mujoco; any other env builds as it is, mujoco left unimported)."""
    entry = str(getattr(gymnasium.spec(name), "entry_point", ""))
    return (
        mujoco_warnings_dropped(*MUJOCO_NOTICES)
        if entry.startswith("gymnasium.envs.mujoco")
        else contextlib.nullcontext()
    )


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
