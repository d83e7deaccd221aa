"""benchmarks/peers.py at GPU-sized batches: its suites, its contenders and its ``measure``, other sizes.

peers.py fixes each suite's size (gymnax 1024 envs x 1000 steps, brax 64 x 200), sizes for a CPU. This
runs the same suite builders and the same measurement for each ``--num-envs`` and writes the same rows.

    python benchmarks/gpu/peers_sized.py --suite gymnax --num-envs 16384,262144 --steps 1000 [--repeats 7] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import peers  # noqa: E402
from _timing import write_json  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", default="gymnax", help=f"one of {sorted(peers.SUITES)}")
    parser.add_argument("--num-envs", default="16384", help="comma-separated batch sizes")
    parser.add_argument("--steps", type=int, default=None, help="scan steps (default: peers.py's for the suite)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the rows as JSON")
    args = parser.parse_args()

    build, _, default_steps = peers.SUITES[args.suite]
    steps = args.steps or default_steps
    missing = [name for name in ("jaxnasium", "gxm") if not peers.installed(name)]
    if missing:
        print(f"not installed, left out: {', '.join(missing)}", file=sys.stderr)
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}; median of {args.repeats} interleaved repeats")
    rows = []
    for n in [int(x) for x in args.num_envs.split(",")]:
        row = peers.measure(build(n, steps), args.repeats)
        rows.append(row)
        write_json(rows, args.json)  # after each size: a later size that fails keeps the earlier rows
        peers.print_row(row, n, steps, compile_times=True)
        sys.stdout.flush()


if __name__ == "__main__":
    jnp.zeros(())  # start the backend before timing anything
    main()
