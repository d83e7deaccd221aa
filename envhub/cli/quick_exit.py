"""The ``envhub`` process ends as soon as its command is done, without the interpreter's teardown.

A command that imported jax and a backend leaves a heap of objects that Python frees one by one when it
tears itself down: about 0.5 s after ``envhub info gymnax/CartPole-v1`` and 2 s after ``envhub info
brax/ant`` on a 2-core machine, work that nobody waits for. ``end_after_exit_handlers`` registers, before
the command imports anything, an exit handler that runs last (handlers run last-registered first): by
then Python has joined the command's threads and run every other exit handler (jax's, MuJoCo's, temporary
folders'), so all that is left is to flush the standard streams and end with the command's code. Under
coverage, whose data is saved by a handler registered before this one, the process ends as usual.
"""

from __future__ import annotations

import atexit
import os
import sys

__all__ = ["end_after_exit_handlers"]


def end_after_exit_handlers(status: list[int | None]) -> None:
    """At exit, after every other exit handler, end the process with ``status[0]`` (``None``: as usual)."""
    atexit.register(_end, status)


def _end(status: list[int | None]) -> None:
    if status[0] is None or "coverage" in sys.modules:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a reader that went away, a closed stream: nothing left to deliver
            pass
    os._exit(status[0])
