"""Progress on stderr for the long steps of a command: ``compiling ... 12.3 s`` while it waits, then a bar.

On a terminal, a step longer than ``GRACE_S`` shows one line that updates in place and is cleared when
the step ends, so a fast error stays the only line on stderr; the bar is redrawn in place. Elsewhere (a log,
a pipe, CI) nothing is redrawn: a step prints a line only every ``LOG_EVERY_S`` of it, and a bar at most one
line every ``LOG_EVERY_S`` plus its final one, so logs stay short and hold no ``\r``.
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType

#: Seconds before the first progress output.
GRACE_S = 2.0
#: Seconds before the first line, and between lines, where stderr is not a terminal.
LOG_EVERY_S = 15.0


class Ticker:
    """``with Ticker("compiling num_envs=64"):`` shows the label and the seconds since it began until
    ``stop()`` or the block's end; ``quiet`` shows nothing."""

    def __init__(self, label: str, *, quiet: bool = False, stream: object = None) -> None:
        self.label = label
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.shown = False  # whether anything was printed (a terminal line to clear)
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Ticker:
        if not self.quiet:
            self._thread = threading.Thread(target=self._run, name="envhub-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def phase(self, label: str) -> None:
        """Go on with another step: show ``label`` and the seconds since now."""
        self.label, self.start = label, time.perf_counter()

    def stop(self) -> None:
        """End the step: no more output, and a terminal's progress line is cleared (the next output starts clean)."""
        if self._done.is_set():
            return
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if self.shown and self._tty():
            self._write("\r\x1b[K")

    def _run(self) -> None:
        tty = self._tty()
        if self._done.wait(GRACE_S if tty else LOG_EVERY_S):
            return
        while True:
            text = f"{self.label} ... {self.elapsed():.1f} s"
            self._write(f"\r\x1b[K{text}" if tty else f"{text}\n")
            self.shown = True
            if self._done.wait(0.2 if tty else LOG_EVERY_S):
                return

    def _tty(self) -> bool:
        return _isatty(self.stream)

    def _write(self, text: str) -> None:
        if not _write(self.stream, text):  # stderr closed: no more progress
            self._done.set()


class Bar:
    """``bar = Bar("drawing", total)``, then ``bar.update(done)``: ``label [####....] done/total`` on stderr.

    On a terminal the line is redrawn in place and ends with a newline when complete. Elsewhere (a log, CI)
    a plain line is written at most every ``LOG_EVERY_S`` seconds, and the final one when complete: no ``\\r``.
    """

    def __init__(self, label: str, total: int, *, quiet: bool = False, width: int = 30, stream: object = None) -> None:
        self.label, self.total, self.quiet, self.width = label, total, quiet, width
        self.stream = stream if stream is not None else sys.stderr
        self.tty = _isatty(self.stream)
        self.last: float | None = None  # when the last log line was written (or the first update came)

    def update(self, done: int) -> None:
        if self.quiet:
            return
        complete, now = done >= self.total, _clock()
        if self.last is None:
            self.last = now
        if not self.tty and not complete and now - self.last < LOG_EVERY_S:
            return
        self.last = now
        filled = self.width * min(done, self.total) // max(self.total, 1)
        line = f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{self.total}"
        _write(self.stream, (f"\r{line}" + ("\n" if complete else "")) if self.tty else f"{line}\n")


def _clock() -> float:
    """Seconds from a monotonic clock (a test replaces it with a fake one)."""
    return time.monotonic()


def _isatty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def _write(stream: object, text: str) -> bool:
    """Write and flush; False if the stream is closed (progress is not worth an error)."""
    try:
        stream.write(text)  # type: ignore[attr-defined]
        stream.flush()  # type: ignore[attr-defined]
    except (OSError, ValueError):
        return False
    return True


__all__ = ["GRACE_S", "LOG_EVERY_S", "Bar", "Ticker"]
