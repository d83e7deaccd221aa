"""``envhub bench ID -n 1,64``: steps per second of a jitted ``lax.scan`` rollout, per batch size.

The output paths are checked before anything runs; while a batch size is made, stderr shows ``making ID
num_envs=N ... seconds``, then while its first call runs ``compiling num_envs=N ... seconds``, the span the
table's ``COMPILE_S`` measures (``envhub.cli.progress``), then a bar over the timed repeats.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from envhub.cli.common import (
    EXIT_OK,
    UsageError,
    add_kwarg_argument,
    check_output,
    parse_kwargs,
    positive_int,
    print_table,
    rollout_steps,
)
from envhub.cli.progress import Bar, Ticker

NAME = "bench"
PLOT_FORMATS = (".png", ".svg", ".pdf")


def add_arguments(sub: Any) -> argparse.ArgumentParser:
    """Add the ``envhub bench`` parser to ``sub`` (argparse subparsers)."""
    p = sub.add_parser(NAME, help="measure steps per second of a jitted lax.scan rollout")
    p.add_argument("env_id", metavar="ID", help="environment id, e.g. gymnax/CartPole-v1")
    p.add_argument(
        "-n", "--num-envs", default="1", metavar="N[,N...]", help="batch sizes to measure, comma-separated (default 1)"
    )
    add_kwarg_argument(p)
    p.add_argument("--steps", type=rollout_steps, default=1000, help="scan length per repeat (default 1000)")
    p.add_argument("--repeats", type=positive_int, default=5, help="timed repeats; the median is reported (default 5)")
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        default=None,
        metavar="PATH",
        help="write results as JSON to PATH (or stdout without PATH)",
    )
    p.add_argument("--plot", default=None, metavar="PATH", help="write a plot (.png, .svg or .pdf) of steps/s")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p


def batch_sizes(text: str) -> list[int]:
    """``"1,64"`` as ``[1, 64]``; a ``UsageError`` naming ``text`` unless every item is a positive int."""
    try:
        sizes = [int(n) for n in text.split(",")]
    except ValueError:
        sizes = [0]
    if any(n < 1 for n in sizes):
        raise UsageError(f"--num-envs {text!r} must be comma-separated positive ints, e.g. 1,64,1024")
    return sizes


def run(args: argparse.Namespace) -> int:
    sizes = batch_sizes(args.num_envs)
    kwargs = parse_kwargs(args.kwarg)
    if args.json not in (None, "-"):
        check_output(args.json, "--json")
    if args.plot:
        check_output(args.plot, "--plot", PLOT_FORMATS)
        _need_matplotlib()
    results = []
    for size in sizes:
        # Two steps on stderr: making the env (the first one imports the backend library), then the first call
        # of the jitted rollout, which is what COMPILE_S measures (both start at on_compile).
        with Ticker(f"making {args.env_id} num_envs={size}", quiet=args.quiet) as ticker:
            import envhub
            from envhub.tools import bench

            def make_env(n: int | None) -> Any:
                return envhub.make(args.env_id, num_envs=n, **kwargs)

            def on_compile(size: int = size, ticker: Ticker = ticker) -> None:
                ticker.phase(f"compiling num_envs={size}")

            repeats = Bar(f"num_envs={size:<6}", args.repeats, quiet=args.quiet, width=min(args.repeats, 30))

            def on_repeat(i: int, total: int, ticker: Ticker = ticker, repeats: Bar = repeats) -> None:
                ticker.stop()
                repeats.update(i)

            results.append(bench.measure(make_env, size, args.steps, args.repeats, on_repeat, on_compile))
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


def _need_matplotlib() -> None:
    import importlib.util

    from envhub.errors import MissingDependencyError

    if importlib.util.find_spec("matplotlib") is None:
        raise MissingDependencyError("envhub bench --plot", "matplotlib", "pip install matplotlib")


__all__ = ["NAME", "PLOT_FORMATS", "add_arguments", "batch_sizes", "run"]
