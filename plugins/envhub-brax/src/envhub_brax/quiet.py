"""The warnings brax and its libraries give that tell an envhub-brax user nothing, dropped where they arise.

Only these messages are ignored, only while the plugin imports, builds or traces brax (``quiet()``), MuJoCo
compiles a brax model (``mujoco_notices_dropped()``) or the plugin imports brax (``prints_dropped()``, lines
printed); every other warning, and anything else brax prints (on stderr while it imports), still reaches the user.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

from envhub.plugin import mujoco_warnings_dropped, printed_lines_dropped

# (category, message regex): what each silences, and why.
NOTICES = (
    # Importing brax imports jaxopt (its generalized pipeline's solver), which warns that it is no longer maintained:
    # the user never calls jaxopt, and only brax could move off it.
    (DeprecationWarning, r"JAXopt is no longer maintained"),
    # brax 0.14 warns on every model it loads (brax.io.mjcf) that it is not actively maintained and points to
    # MJX: it says so of every brax env a user asked for by name, and envhub-brax already runs brax on MJX.
    (UserWarning, r"Brax System, piplines and environments are not actively being maintained"),
    # brax's MJX pipeline reads `data.contact`/`data.ncon`, which MJX (mujoco 4) deprecates for `data._impl.*`,
    # while brax traces a reset or step: brax's code to change, nothing the user can do.
    (DeprecationWarning, r"Accessing `\w+` directly from `Data` is deprecated"),
)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """While it runs, the ``NOTICES`` are not shown (and no other warning is touched)."""
    with warnings.catch_warnings():
        for category, message in NOTICES:
            warnings.filterwarnings("ignore", message=message, category=category)
        yield


# MuJoCo's compiler warnings (C, not Python's warnings), with why each is dropped:
MUJOCO_NOTICES = (
    # brax's halfcheetah.xml sets `settotalmass`, which MuJoCo 3.3+ deprecates: brax's model to change. MuJoCo's
    # own handler prints it and appends it to MUJOCO_LOG.TXT in the user's working folder, on every make.
    r"compiler attribute 'settotalmass' is deprecated",
)


def mujoco_notices_dropped() -> contextlib.AbstractContextManager[None]:
    """While it runs, MuJoCo's ``MUJOCO_NOTICES`` are dropped; its other warnings are passed to the handler set
    before, or printed to stderr as MuJoCo prints them (without MuJoCo's log file)."""
    return mujoco_warnings_dropped(*MUJOCO_NOTICES)


# Lines printed (``print``, not warnings) while brax imports, with why each is dropped:
PRINTED_NOTICES = (
    # brax imports mujoco.mjx, whose mujoco.mjx.warp tries warp-lang (MJX's optional Warp implementation, which
    # envhub-brax never uses) and prints both lines where it is not installed: on every run of a brax-only install.
    # A warp that is installed but fails to import still prints its reason.
    r"Failed to import (warp|mujoco_warp): No module named 'warp'",
)


def prints_dropped() -> contextlib.AbstractContextManager[None]:
    """While it runs, what Python code prints goes to stderr (stdout is the user's), less the ``PRINTED_NOTICES``."""
    return printed_lines_dropped(*PRINTED_NOTICES)
