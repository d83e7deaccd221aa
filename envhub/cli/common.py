"""What the ``envhub`` commands share: exit codes, usage errors, ``-k KEY=VALUE`` parsing, tables, the env
arguments, and the check of a file a command will write (before any long work)."""

from __future__ import annotations

import argparse
import ast
import os
import tempfile
from pathlib import Path
from typing import Any

#: Exit codes (docs/cli.md lists them): success, a check failed, bad usage, an envhub error.
EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_ENVHUB_ERROR = 3
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool whose reader closed the pipe
EXIT_INTERRUPTED = 130  # 128 + SIGINT: Ctrl-C
EXIT_INTERNAL_ERROR = 3  # a bug in envhub, a plugin or a library: an error like any other (1 means a check failed)

#: Set to 1 (or pass ``--traceback``) to see the traceback of an error the command would show as one line.
TRACEBACK_SWITCH = "ENVHUB_TRACEBACK"


class UsageError(Exception):
    """Bad command-line usage: printed with exit code 2."""


def add_env_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The arguments of a command about one environment: ID, ``-n``, ``-k KEY=VALUE``, ``--json``."""
    p.add_argument("env_id", metavar="ID", help="environment id, e.g. gymnax/CartPole-v1")
    p.add_argument("-n", "--num-envs", type=positive_int, default=None, help="batch size (default: one environment)")
    add_kwarg_argument(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    return p


def add_kwarg_argument(p: argparse.ArgumentParser) -> None:
    """``-k KEY=VALUE``, repeatable: a backend keyword argument (read by ``parse_kwargs``)."""
    p.add_argument(
        "-k",
        "--kwarg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="backend keyword argument (VALUE is a Python literal, inf or nan, or a string); repeatable",
    )


def positive_int(text: str) -> int:
    """An argparse ``type``: a positive int (argparse turns the error into a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive int")
    return value


def rollout_steps(text: str) -> int:
    """An argparse ``type``: a rollout's length, an int from 1 to 2**31 - 1 (``envhub.rollout``'s own rule)."""
    from envhub.core.kwargs import STEPS_MAX  # no jax: argparse runs this for bench and record only

    value = positive_int(text)
    if value > STEPS_MAX:
        raise argparse.ArgumentTypeError(f"{text!r} is not an int from 1 to 2**31 - 1")
    return value


def seed(text: str) -> int:
    """An argparse ``type``: a key's seed, an int in [0, 2**63)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"{text!r} is not an int from 0 to 2**63 - 1")
    return value


#: ``make`` keywords a ``-k`` cannot give: what to use instead.
NOT_KWARGS = {
    "num_envs": "use -n N for a batch of N",
    "mesh": "a jax.sharding.Mesh cannot be written on the command line: call envhub.make(ID, mesh=...) in Python",
}


def parse_kwargs(pairs: list[str]) -> dict[str, Any]:
    """``["KEY=VALUE", ...]`` as a dict; VALUE is a Python literal, ``inf``/``-inf``/``nan`` a float, else the string."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            raise UsageError(f"--kwarg {pair!r} must look like KEY=VALUE with KEY a Python identifier")
        if key in NOT_KWARGS:
            raise UsageError(f"--kwarg {pair!r}: {NOT_KWARGS[key]}")
        try:
            out[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[key] = float(raw) if raw.strip().lower() in NON_FINITE else raw
    return out


#: What ``-k`` reads as a float though Python has no literal for it: ``-k x_threshold=inf`` (make refuses nan).
NON_FINITE = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan")


def print_table(rows: list[list[str]], header: list[str]) -> None:
    """Print ``rows`` under ``header`` in aligned columns."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


def make_env(args: argparse.Namespace) -> Any:
    """The environment the command's ID, ``-n`` and ``-k`` arguments name."""
    import envhub

    return envhub.make(args.env_id, num_envs=args.num_envs, **parse_kwargs(args.kwarg))


def check_output(path: str | os.PathLike[str], option: str, suffixes: tuple[str, ...] | None = None) -> str:
    """The lowercase suffix of ``path`` once a file can be written there: the suffix is one of ``suffixes``
    (any if None), the folder exists and takes a new file (tried), ``path`` is not a folder. Before any long work.

    Raises:
        InvalidArgumentError: what is wrong, naming ``option`` and the fix.
    """
    from envhub.errors import InvalidArgumentError

    where = Path(path)
    suffix = where.suffix.lower()
    shown = f"{option} {str(path)!r}"
    if suffixes is not None and suffix not in suffixes:
        problem = f"envhub cannot write the extension {suffix!r}" if suffix else "the name has no extension"
        raise InvalidArgumentError(f"{shown}: {problem}; end the name with one of {', '.join(suffixes)}.")
    if where.is_dir():
        raise InvalidArgumentError(f"{shown} is a folder; name a file in it, e.g. {str(where / ('out' + suffix))!r}.")
    folder = where.parent
    ancestor = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    if not ancestor.is_dir():
        raise InvalidArgumentError(f"{shown}: {str(ancestor)!r} is a file, not a folder; pick a path in a folder.")
    if ancestor != folder:
        raise InvalidArgumentError(
            f"{shown}: the folder {str(folder)!r} does not exist; create it first (mkdir -p {str(folder)!r}) "
            "or pick a path in an existing folder."
        )
    writable_folder(folder, shown)
    return suffix


def writable_folder(folder: Path, shown: str) -> None:
    """Raise ``InvalidArgumentError`` unless a file can be created in ``folder`` (tried, so read-only mounts count)."""
    from envhub.errors import InvalidArgumentError

    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise InvalidArgumentError(
            f"{shown}: cannot write in the folder {str(folder)!r} ({exc.strerror or exc}); "
            "pick a folder you can write to."
        ) from None
