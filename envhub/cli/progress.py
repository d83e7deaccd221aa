"""Progress on stderr for the long steps of a command: ``compiling ... 12.3 s`` while it waits, then a bar.

On a terminal, a step longer than ``GRACE_S`` shows one line that updates in place and is cleared when
the step ends, so a fast error stays the only line on stderr. Elsewhere (a log, a pipe) a line is
printed only every ``LOG_EVERY_S`` of a step, so logs stay short and a quick command prints nothing.
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
        try:
            return bool(self.stream.isatty())  # type: ignore[attr-defined]
        except (AttributeError, ValueError):
            return False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)  # type: ignore[attr-defined]
            self.stream.flush()  # type: ignore[attr-defined]
        except (OSError, ValueError):  # stderr closed: progress is not worth an error
            self._done.set()


def bar(label: str, done: int, total: int, quiet: bool, width: int = 30) -> None:
    """One update of a progress bar on stderr (``label [####....] done/total``); a newline when complete."""
    if quiet:
        return
    filled = width * done // max(total, 1)
    end = "\n" if done >= total else ""
    try:
        line = f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
        print(line, end=end, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


__all__ = ["GRACE_S", "LOG_EVERY_S", "Ticker", "bar"]
