"""What a backend library prints while a plugin imports or builds it, kept off the user's stdout.

A plugin wraps the call in ``printed_lines_dropped(*patterns)``: what Python code prints goes, line by line,
to stderr (stdout is the user's program's), less the lines that fully match one of ``patterns`` (the library's
notices that tell the user nothing, e.g. mujoco.mjx's ``Failed to import warp`` without warp-lang).
``mujoco_warnings_dropped(*patterns)`` does the same for MuJoCo's compiler warnings (C, not Python's warnings),
which MuJoCo's own handler prints and appends to ``MUJOCO_LOG.TXT`` in the user's working folder.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from collections.abc import Iterator
from typing import TextIO


class _Lines(io.TextIOBase):
    """A text stream passing each whole line to ``target``, less the lines that fully match a pattern."""

    def __init__(self, target: TextIO | None, patterns: tuple[str, ...]) -> None:
        self.target, self.patterns, self.pending = target, patterns, ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self._pass(line + "\n")
        return len(text)

    def _pass(self, line: str) -> None:
        if self.target is not None and not any(re.fullmatch(p, line.rstrip("\n")) for p in self.patterns):
            self.target.write(line)

    def flush(self) -> None:
        if self.target is not None:
            self.target.flush()


@contextlib.contextmanager
def printed_lines_dropped(*patterns: str) -> Iterator[None]:
    """While it runs, what Python code prints goes to stderr, less the lines that fully match a regex of
    ``patterns``; a last line without its newline is passed on at the end."""
    lines = _Lines(sys.stderr, patterns)
    try:
        with contextlib.redirect_stdout(lines):
            yield
    finally:
        if lines.pending:
            lines._pass(lines.pending)
        lines.flush()


@contextlib.contextmanager
def mujoco_warnings_dropped(*patterns: str) -> Iterator[None]:
    """While it runs, MuJoCo's warnings matching a regex of ``patterns`` (searched) are dropped; its other warnings go
    to the handler set before, or to stderr as MuJoCo prints them (without MuJoCo's log file). Imports ``mujoco``:
    for plugins whose library compiles MuJoCo models."""
    import mujoco

    before = mujoco.get_mju_user_warning()

    def handler(message: str) -> None:
        if any(re.search(pattern, message) for pattern in patterns):
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


__all__ = ["mujoco_warnings_dropped", "printed_lines_dropped"]
