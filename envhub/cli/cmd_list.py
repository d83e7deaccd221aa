"""``envhub list [PREFIX]``: the installed backends and their status, or every id of one backend.

The table comes from entry-point metadata (``envhub.registry.discovery``): it imports no plugin, no
backend library and no jax. ``--check`` imports each plugin module and probes its hooks, ``--deep``
runs them in full; ``PREFIX`` loads that one plugin to list its ids.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from envhub.cli.common import EXIT_OK, print_table
from envhub.registry.discovery import installed_backends, switches

NAME = "list"
#: The version of the ``--json`` fields (docs/cli.md): fields may be added within a schema, never
#: removed, renamed or retyped. Each row carries it, so the output stays a JSON array of objects.
JSON_SCHEMA = 1


def backend_row(b: Any) -> dict[str, Any]:
    """One ``envhub list --json`` row (schema 1) of a ``BackendStatus``; fields named one by one, so
    a new attribute of BackendStatus never reaches the output unannounced."""
    error = b.reason if b.status == "error" else None
    fields = (b.prefix, b.distribution, b.version, b.status, b.reason, b.api, error)
    return {
        "schema": JSON_SCHEMA,
        **dict(zip(("prefix", "distribution", "version", "status", "reason", "api", "error"), fields)),
    }


def env_row(s: Any) -> dict[str, Any]:
    """One ``envhub list PREFIX --json`` row (schema 1) of an ``EnvSpec``."""
    return {"schema": JSON_SCHEMA, "id": s.id, "available": s.available, "reason": s.unavailable or ""}


def add_arguments(sub: Any) -> argparse.ArgumentParser:
    """Add the ``envhub list`` parser to ``sub`` (argparse subparsers)."""
    p = sub.add_parser(NAME, help="list backends, or the environments of one backend")
    p.add_argument("prefix", nargs="?", help="a backend prefix, e.g. gymnax")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--check",
        action="store_true",
        help="import each plugin module (never a backend library) and run its hooks up to their first import of "
        "one, so a plugin that fails to import or whose hook raises shows as status error; adds backend notes",
    )
    p.add_argument(
        "--deep",
        action="store_true",
        help="run each backend's envhub_register_envs hook in full (imports the backend libraries; without it, "
        "a hook runs only up to its first import of one), so any failing hook shows as status error",
    )
    return p


def statuses(check: bool = False, deep: bool = False) -> list[Any]:
    """The rows of ``envhub list``: from metadata, or from the registry when asked to load (``check``,
    ``deep``) or when this process uses it already (its in-process backends and what it has loaded count)."""
    if not (check or deep) and "envhub.registry.api" not in sys.modules:
        return installed_backends()
    import envhub

    return envhub.default_registry().list_backends(deep=deep, load=check)


def run(args: argparse.Namespace) -> int:
    if args.prefix is None:
        backends = statuses(args.check, args.deep)
        if args.json:
            print(json.dumps([backend_row(b) for b in backends], indent=2))
            return EXIT_OK
        hidden = ", ".join(f"{k}={v!r}" for k, v in switches().items())
        if not backends:
            from envhub.registry.plugin_api import compatible_core_range

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
    import envhub

    specs = envhub.list_envs(args.prefix)
    if args.json:
        print(json.dumps([env_row(s) for s in specs], indent=2))
        return EXIT_OK
    for s in specs:
        print(s.id if s.available else f"{s.id}  (unavailable: {s.unavailable})")
    print(
        f"\n{sum(s.available for s in specs)} available, {sum(not s.available for s in specs)} unavailable",
        file=sys.stderr,
    )
    return EXIT_OK


__all__ = ["JSON_SCHEMA", "NAME", "add_arguments", "backend_row", "env_row", "run", "statuses"]
