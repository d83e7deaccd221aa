"""What a backend library prints while a plugin imports or builds it, kept off the user's stdout.

A plugin wraps the call in ``printed_lines_dropped(*patterns)``: what Python code prints goes, line by line,
to stderr (stdout is the user's program's), less the lines that fully match one of ``patterns`` (the library's
notices that tell the user nothing, e.g. mujoco.mjx's ``Failed to import warp`` without warp-lang).
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


__all__ = ["printed_lines_dropped"]
