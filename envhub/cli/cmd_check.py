"""``envhub check ID``: the conformance kit on one environment (exit 1 if a check fails)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from envhub.cli.common import EXIT_CHECK_FAILED, EXIT_OK, UsageError, add_env_arguments, parse_kwargs

NAME = "check"


def add_arguments(sub: Any) -> argparse.ArgumentParser:
    """Add the ``envhub check`` parser to ``sub`` (argparse subparsers)."""
    p = add_env_arguments(sub.add_parser(NAME, help="run the conformance kit on one environment"))
    p.add_argument("--only", default=None, help="comma-separated check names (default: all)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p


def run(args: argparse.Namespace) -> int:
    import envhub
    from envhub import testing

    kwargs = parse_kwargs(args.kwarg)
    spec = envhub.default_registry().spec(args.env_id)
    options = testing.options_for(spec)
    only = [n.strip() for n in args.only.split(",") if n.strip()] if args.only is not None else None
    unknown = [n for n in only or [] if n not in testing.CHECKS]
    if unknown or only == []:
        what = f"{unknown[0]!r} is not a check" if unknown else f"{args.only!r} names no check"
        raise UsageError(f"--only {what}; the checks are: {', '.join(testing.CHECKS)}")

    def make_env(**extra: Any) -> Any:
        return envhub.make(args.env_id, num_envs=args.num_envs, **{**kwargs, **extra})

    make_env().close()  # an env that cannot be made (unavailable, a bad kwarg, a failing factory) is one error, exit 3

    def on_start(name: str, i: int, total: int) -> None:
        if not args.quiet:
            print(f"[{i + 1:2d}/{total}] {name} ...", file=sys.stderr, flush=True)

    results = testing.run_checks(make_env, options, only=only, on_start=on_start)
    if args.json:
        print(
            json.dumps(
                {
                    "id": spec.id,
                    "passed": not any(r.failed for r in results),
                    "checks": [{**dataclasses.asdict(r), "passed": r.passed} for r in results],
                },
                indent=2,
            )
        )
    else:
        print(f"envhub check {spec.id}" + (f" (num_envs={args.num_envs})" if args.num_envs else ""))
        print(testing.format_report(results))
    return EXIT_CHECK_FAILED if any(r.failed for r in results) else EXIT_OK


__all__ = ["NAME", "add_arguments", "run"]
