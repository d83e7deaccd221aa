"""Run a plugin's hook for ``envhub list`` without importing a backend library: up to its first new import.

``envhub list`` imports plugin modules, never backend libraries (it must stay fast and work where a backend
library is missing or broken), yet a hook that raises must
show as an error row. ``probe(call)`` runs ``call`` in this thread with an import guard: an import of a
top-level module not loaded yet (the standard library aside) stops the call there. A call that ends
without reaching one ran exactly as it would unguarded; one that reached one is "not probed" (the
backend's library is needed to know), whatever it then did. ``envhub list --deep`` runs hooks in full.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType


class _NewImport(BaseException):
    """Stops a probed call at its first new import (a ``BaseException``: a plugin's ``except Exception`` lets it by)."""


class _Guard(MetaPathFinder):
    """Refuses, in one thread, imports whose top-level module is neither loaded nor in the standard library."""

    def __init__(self) -> None:
        self.thread = threading.get_ident()
        self.reached: str | None = None

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        top = fullname.partition(".")[0]
        if threading.get_ident() != self.thread or top in sys.modules or top in sys.stdlib_module_names:
            return None  # the usual finders go on
        self.reached = fullname
        raise _NewImport(fullname)


def probe(call: Callable[[], object]) -> bool:
    """Run ``call()``: True if it ended without reaching a new import, False if it reached one.

    What ``call`` raises without reaching a new import propagates.
    """
    guard = _Guard()
    sys.meta_path.insert(0, guard)
    try:
        call()
    except (_NewImport, Exception, SystemExit):
        if guard.reached is None:
            raise
    finally:
        sys.meta_path.remove(guard)
    return guard.reached is None


__all__ = ["probe"]
