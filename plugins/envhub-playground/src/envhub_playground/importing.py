"""Importing mujoco_playground with only its news reaching the user."""

from __future__ import annotations

import contextlib
import io
import re
import sys
import warnings
from collections.abc import Iterator
from typing import Any, TextIO

# Lines printed (``print``, not warnings) while mujoco_playground imports, with why each is dropped:
PRINTED_NOTICES = (
    # mujoco.mjx.warp tries warp-lang and prints both lines where it is not installed (playground requires it, but a
    # platform without its wheel, or an install without dependencies, runs on): `impl="warp"` then raises, naming
    # it. A warp that is installed but fails to import still prints its reason.
    r"Failed to import (warp|mujoco_warp): No module named 'warp'",
)


def import_registry() -> Any:
    """``mujoco_playground.registry``, imported with what it prints on stderr (stdout stays clean), less the
    ``PRINTED_NOTICES``."""
    with _prints_dropped(), warnings.catch_warnings():
        # mujoco_playground imports brax, which imports jaxopt, which warns that it is no longer maintained: the user
        # never calls jaxopt, and only brax could move off it. Only that warning is dropped.
        warnings.filterwarnings("ignore", message=r"JAXopt is no longer maintained", category=DeprecationWarning)
        from mujoco_playground import registry
    return registry


class _Lines(io.TextIOBase):
    """A text stream passing each whole line to ``target``, less the lines that fully match a ``PRINTED_NOTICES``."""

    def __init__(self, target: TextIO | None) -> None:
        self.target, self.pending = target, ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self._pass(line + "\n")
        return len(text)

    def _pass(self, line: str) -> None:
        if self.target is not None and not any(re.fullmatch(n, line.rstrip("\n")) for n in PRINTED_NOTICES):
            self.target.write(line)

    def flush(self) -> None:
        if self.target is not None:
            self.target.flush()


@contextlib.contextmanager
def _prints_dropped() -> Iterator[None]:
    """While it runs, what Python code prints goes to stderr, less the ``PRINTED_NOTICES``."""
    lines = _Lines(sys.stderr)
    try:
        with contextlib.redirect_stdout(lines):
            yield
    finally:
        if lines.pending:
            lines._pass(lines.pending)
        lines.flush()
