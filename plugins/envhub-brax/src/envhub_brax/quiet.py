"""The warnings brax and its libraries give that tell an envhub-brax user nothing, dropped where they arise.

Only these messages are ignored, only while the plugin imports, builds or traces brax (``quiet()``); every
other warning, and anything brax prints, still reaches the user.
"""

from __future__ import annotations

import contextlib
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
