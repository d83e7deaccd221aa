"""What the ``envhub`` commands share: exit codes, usage errors, ``-k KEY=VALUE`` parsing, tables, the env arguments."""

from __future__ import annotations

import argparse
import ast
from typing import Any

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_ENVHUB_ERROR = 0, 1, 2, 3
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool whose reader closed the pipe


class UsageError(Exception):
    """Bad command-line usage: printed with exit code 2."""


def add_env_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The arguments of a command about one environment: ID, ``-n``, ``-k KEY=VALUE``, ``--json``."""
    p.add_argument("env_id", metavar="ID", help="environment id, e.g. gymnax/CartPole-v1")
    p.add_argument("-n", "--num-envs", type=positive_int, default=None, help="batch size (default: one environment)")
    p.add_argument(
        "-k",
        "--kwarg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="backend keyword argument (VALUE is a Python literal or a string); repeatable",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    return p


def positive_int(text: str) -> int:
    """An argparse ``type``: a positive int (argparse turns the error into a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive int")
    return value


def parse_kwargs(pairs: list[str]) -> dict[str, Any]:
    """``["KEY=VALUE", ...]`` as a dict; VALUE is a Python literal, else the string."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            raise UsageError(f"--kwarg {pair!r} must look like KEY=VALUE with KEY a Python identifier")
        try:
            out[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[key] = raw
    return out


def print_table(rows: list[list[str]], header: list[str]) -> None:
    """Print ``rows`` under ``header`` in aligned columns."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


def make_env(args: argparse.Namespace) -> Any:
    """The environment the command's ID, ``-n`` and ``-k`` arguments name."""
    import envhub

    return envhub.make(args.env_id, num_envs=args.num_envs, **parse_kwargs(args.kwarg))
