"""The warnings brax and its libraries give that tell an envhub-brax user nothing, dropped where they arise.

Only these messages are ignored, only while the plugin imports, builds or traces brax (``quiet()``) or
MuJoCo compiles a brax model (``mujoco_notices_dropped()``); every other warning, and anything brax
prints, still reaches the user.
"""

from __future__ import annotations

import contextlib
import re
import sys
import warnings
from collections.abc import Iterator

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


@contextlib.contextmanager
def mujoco_notices_dropped() -> Iterator[None]:
    """While it runs, MuJoCo's ``MUJOCO_NOTICES`` are dropped; its other warnings are passed to the handler set
    before, or printed to stderr as MuJoCo prints them (without MuJoCo's log file)."""
    import mujoco

    before = mujoco.get_mju_user_warning()

    def handler(message: str) -> None:
        if any(re.search(notice, message) for notice in MUJOCO_NOTICES):
            return
        if before is not None:
            before(message)
        else:
            print(f"WARNING: {message}", file=sys.stderr)

    mujoco.set_mju_user_warning(handler)
    try:
        yield
    finally:
        mujoco.set_mju_user_warning(before)
