"""The ``envhub`` command: list backends and environments, inspect, check, benchmark and record one; start a plugin.

Exit codes: 0 success, 1 a check failed, 2 bad usage, 3 an envhub error (unknown id, backend
not installed, plugin failure, ...), printed as one line, never a traceback; a closed stdout
(``envhub list | head -1``) ends the command quietly with 141, as a tool killed by SIGPIPE; Ctrl-C
with 130. Running out of memory (a batch too large for the machine) is an error, 3, with the fix. Any other
exception is a bug (in envhub, a plugin or a library under them): one line ``envhub: internal error: <Type>:
<message> (...)`` and 3, as any error (1 stays "a check failed"; the line's "internal error" tells a bug from bad
input). ``--traceback`` (anywhere on the line) or ``ENVHUB_TRACEBACK=1`` prints the traceback of an internal or
envhub error before its line. Data commands take ``--json``; progress goes to stderr.
Each command is one module here (``cmd_<name>.py``: ``NAME``, ``add_arguments``, ``run``); add
a new one to ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from envhub.cli import cmd_bench, cmd_check, cmd_info, cmd_list, cmd_new_plugin, cmd_record, quick_exit
from envhub.cli.common import (
    EXIT_BROKEN_PIPE,
    EXIT_CHECK_FAILED,
    EXIT_ENVHUB_ERROR,
    EXIT_INTERNAL_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    TRACEBACK_SWITCH,
    UsageError,
)

COMMANDS = {m.NAME: m for m in (cmd_list, cmd_info, cmd_check, cmd_bench, cmd_record, cmd_new_plugin)}

EPILOG = """examples:
  envhub list                          installed backends and their status
  envhub list gymnax                   every environment id of a backend
  envhub info gymnax/CartPole-v1       spaces, dtypes, batching
  envhub check gymnax/Pendulum-v1      run the conformance kit on one environment
  envhub bench gymnax/CartPole-v1 -n 1,64,1024 --json out.json --plot out.png
  envhub info gymnax/CartPole-v1 -k max_steps_in_episode=100   (backend kwargs)
  envhub record gymnasium/LunarLander-v3 --steps 300 --out lander.gif
  envhub new-plugin mybackend          write envhub-mybackend/, a plugin to start from

exit codes: 0 ok, 1 a check failed, 2 bad usage, 3 envhub error (unknown id, missing backend, ...);
  141 when stdout is closed early (envhub list | head -1), 130 when interrupted (Ctrl-C),
  an internal error (a bug) is one line and 3 too: run again with --traceback or ENVHUB_TRACEBACK=1, and report it
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (exit 2), not the usage block and the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="envhub",
        description="One functional JAX API for RL environments from any backend plugin.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    parser.add_argument(  # taken out of the line before parsing (_traceback_wanted), so any place works
        "--traceback", action="store_true", help=f"print the traceback of an error (also {TRACEBACK_SWITCH}=1)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS.values():
        command.add_arguments(sub)
    return parser


def console() -> NoReturn:
    """The ``envhub`` command (its console script and ``python -m envhub``): ``main``, then a quick exit with its code."""
    status: list[int | None] = [None]  # None until main returns: an exception ends the process as usual
    quick_exit.end_after_exit_handlers(status)
    status[0] = main()
    sys.exit(status[0])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code."""
    from envhub.errors import EnvhubError, one_line

    argv = list(sys.argv[1:] if argv is None else argv)
    show_traceback = "--traceback" in argv or os.environ.get(TRACEBACK_SWITCH, "") not in ("", "0")
    argv = [a for a in argv if a != "--traceback"]
    try:
        try:
            args = _parser().parse_args(argv)
        except SystemExit as exc:  # --help, --version or a usage error: argparse has printed it; return its code
            return exc.code if isinstance(exc.code, int) else EXIT_USAGE
        code = int(COMMANDS[args.command].run(args))
        if sys.stdout is not None:  # None: started with stdout closed (`envhub list >&-`), print wrote nothing
            sys.stdout.flush()  # here, where a closed pipe is caught, not in the interpreter's last flush
        return code
    except EnvhubError as exc:
        if show_traceback:
            traceback.print_exc()
        print(f"envhub: error: {one_line(exc)}", file=sys.stderr)
        return EXIT_ENVHUB_ERROR
    except UsageError as exc:
        print(f"envhub: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C: the shell's status for SIGINT, and one line instead of a traceback
        print("\nenvhub: interrupted (KeyboardInterrupt)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`| head`): point stdout at /dev/null so the interpreter's final flush is quiet.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # stdout without a file descriptor (captured): nothing left to flush
            pass
        return EXIT_BROKEN_PIPE
    except Exception as exc:  # a bug, not the user's input: one line that names it and how to see more
        if show_traceback:
            traceback.print_exc()
        if _out_of_memory(exc):  # not a bug: the batch (or the rollout) asked for more memory than there is
            print(f"envhub: error: out of memory: {one_line(exc)}; {OUT_OF_MEMORY_FIX}", file=sys.stderr)
            return EXIT_ENVHUB_ERROR
        more = (
            "the traceback is above" if show_traceback else f"run with --traceback / {TRACEBACK_SWITCH}=1 for details"
        )
        print(f"envhub: internal error: {type(exc).__name__}: {one_line(exc)} ({more}; please report)", file=sys.stderr)
        return EXIT_INTERNAL_ERROR


#: What to do when a command runs out of memory (a batch of 10**11 envs asks NumPy or XLA for terabytes).
OUT_OF_MEMORY_FIX = "run with a smaller batch (-n) or fewer --steps"


def _out_of_memory(exc: BaseException) -> bool:
    """NumPy's ``MemoryError``, or XLA's (a ``JaxRuntimeError`` whose message starts ``RESOURCE_EXHAUSTED``)."""
    return isinstance(exc, MemoryError) or str(exc).startswith("RESOURCE_EXHAUSTED")


def _version() -> str:
    from envhub.registry.plugin_api import SUPPORTED_APIS
    from envhub.version import __version__

    return f"envhub {__version__} (plugin API {', '.join(map(str, SUPPORTED_APIS))})"


__all__ = [
    "COMMANDS",
    "EXIT_BROKEN_PIPE",
    "EXIT_CHECK_FAILED",
    "EXIT_ENVHUB_ERROR",
    "EXIT_INTERNAL_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "console",
    "main",
]
