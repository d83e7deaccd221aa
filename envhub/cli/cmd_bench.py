"""``envhub bench ID -n 1,64``: steps per second of a jitted ``lax.scan`` rollout, per batch size."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from envhub.cli.common import EXIT_OK, UsageError, parse_kwargs, print_table

NAME = "bench"


def add_arguments(sub: Any) -> argparse.ArgumentParser:
    """Add the ``envhub bench`` parser to ``sub`` (argparse subparsers)."""
    p = sub.add_parser(NAME, help="measure steps per second of a jitted lax.scan rollout")
    p.add_argument("env_id", metavar="ID", help="environment id, e.g. gymnax/CartPole-v1")
    p.add_argument(
        "-n", "--num-envs", default="1", metavar="N[,N...]", help="batch sizes to measure, comma-separated (default 1)"
    )
    p.add_argument("-k", "--kwarg", action="append", default=[], metavar="KEY=VALUE", help="backend keyword argument")
    p.add_argument("--steps", type=int, default=1000, help="scan length per repeat (default 1000)")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats; the median is reported (default 5)")
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        default=None,
        metavar="PATH",
        help="write results as JSON to PATH (or stdout without PATH)",
    )
    p.add_argument("--plot", default=None, metavar="PATH", help="write a PNG plot of steps/s against num_envs")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p


def run(args: argparse.Namespace) -> int:
    import envhub
    from envhub.tools import bench

    if args.steps < 1 or args.repeats < 1:
        raise UsageError("--steps and --repeats must be at least 1")
    try:
        sizes = [int(n) for n in args.num_envs.split(",")]
    except ValueError:
        raise UsageError(
            f"--num-envs {args.num_envs!r} must be comma-separated positive ints, e.g. 1,64,1024"
        ) from None
    if any(n < 1 for n in sizes):
        raise UsageError(f"--num-envs {args.num_envs!r} must be comma-separated positive ints, e.g. 1,64,1024")
    kwargs = parse_kwargs(args.kwarg)

    def make_env(n: int | None) -> Any:
        return envhub.make(args.env_id, num_envs=n, **kwargs)

    results = []
    for size in sizes:

        def on_repeat(i: int, total: int, size: int = size) -> None:
            if not args.quiet:
                bar = "#" * i + "." * (total - i)
                end = "\n" if i == total else ""
                print(f"\rnum_envs={size:<6} [{bar}] {i}/{total}", end=end, file=sys.stderr, flush=True)

        results.append(bench.measure(make_env, size, args.steps, args.repeats, on_repeat))
    document = bench.report(results)
    if args.json == "-":
        print(json.dumps(document, indent=2))
    else:
        if args.json:
            with open(args.json, "w") as f:
                json.dump(document, f, indent=2)
        print_table(
            [[r["num_envs"], f"{r['compile_s']:.2f}", f"{r['steps_per_s']:,.0f}"] for r in results],
            ["NUM_ENVS", "COMPILE_S", "STEPS/S"],
        )
        print(
            f"{results[0]['id']}: {args.steps} steps per rollout, median of {args.repeats} repeats, "
            f"jax {document['machine']['jax']} on {document['machine']['device']}"
        )
    if args.plot:
        bench.plot({results[0]["id"]: results}, args.plot, title=results[0]["id"])
    return EXIT_OK


__all__ = ["NAME", "add_arguments", "run"]
