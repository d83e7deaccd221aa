"""``envhub list [PREFIX]``: the installed backends and their status, or every id of one backend."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from envhub.cli._common import EXIT_OK, print_table
from envhub.loading import switches

NAME = "list"


def add_arguments(sub: Any) -> argparse.ArgumentParser:
    """Add the ``envhub list`` parser to ``sub`` (argparse subparsers)."""
    p = sub.add_parser(NAME, help="list backends, or the environments of one backend")
    p.add_argument("prefix", nargs="?", help="a backend prefix, e.g. gymnax")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--deep",
        action="store_true",
        help="run each backend's envhub_register_envs hook in full (imports the backend libraries; without it, "
        "a hook runs only up to its first import of one), so any failing hook shows as status error",
    )
    return p


def run(args: argparse.Namespace) -> int:
    import envhub

    if args.prefix is None:
        backends = envhub.list_backends(deep=args.deep)
        if args.json:
            # "error": the message of a backend in status "error" (else null), next to the fields of BackendStatus
            rows = [{**dataclasses.asdict(b), "error": b.reason if b.status == "error" else None} for b in backends]
            print(json.dumps(rows, indent=2))
            return EXIT_OK
        hidden = ", ".join(f"{k}={v!r}" for k, v in switches().items())
        if not backends:
            from envhub.plugin_api import compatible_core_range

            print(
                f"No envhub backends loaded: {hidden} hides installed plugins; unset it to see them."
                if hidden
                else f'No envhub backends installed; install one, e.g. pip install "envhub[gymnax]{compatible_core_range()}"'
            )
            return EXIT_OK
        print_table(
            [[b.prefix, b.distribution, b.version, "-" if b.api is None else str(b.api), b.status] for b in backends],
            ["PREFIX", "DISTRIBUTION", "VERSION", "API", "STATUS"],
        )
        for b in backends:
            if b.reason:
                print(f"\n{b.prefix}: {b.reason}")
        if hidden:
            print(f"\n{hidden} is set: installed plugins it does not name are not listed.")
        return EXIT_OK
    specs = envhub.list_envs(args.prefix)
    if args.json:
        print(
            json.dumps([{"id": s.id, "available": s.available, "reason": s.unavailable or ""} for s in specs], indent=2)
        )
        return EXIT_OK
    for s in specs:
        print(s.id if s.available else f"{s.id}  (unavailable: {s.unavailable})")
    print(
        f"\n{sum(s.available for s in specs)} available, {sum(not s.available for s in specs)} unavailable",
        file=sys.stderr,
    )
    return EXIT_OK


__all__ = ["NAME", "add_arguments", "run"]
