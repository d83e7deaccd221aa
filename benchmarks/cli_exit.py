"""How long an ``envhub`` command takes with its quick exit (envhub/cli/quick_exit.py) and with the
interpreter's usual teardown, in the same run.

Each command runs in a fresh interpreter: ``python -m envhub ARGS`` (the console script's path, quick exit)
against ``main(ARGS)`` ended by ``sys.exit`` (the teardown frees every object jax and the backend made);
medians of --repeats interleaved runs, and their ratio.

    python benchmarks/cli_exit.py [--repeats 5] [--json benchmarks/results/cli_exit.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "envhub list": ["list"],
    "envhub info gymnax/CartPole-v1": ["info", "gymnax/CartPole-v1"],
    "envhub info brax/inverted_pendulum": ["info", "brax/inverted_pendulum"],
}
ENDS = {
    "quick exit": [sys.executable, "-m", "envhub"],
    "teardown": [sys.executable, "-c", "import sys; from envhub.cli import main; sys.exit(main(sys.argv[1:]))"],
}


def _seconds(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True)
    return time.perf_counter() - start if done.returncode == 0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    times = {(name, end): [] for name in COMMANDS for end in ENDS}
    for i in range(args.repeats):
        for name, command in COMMANDS.items():
            for end, start in ENDS.items():
                times[name, end].append(_seconds([*start, *command]))
        print(f"\rrepeat {i + 1}/{args.repeats}", end="" if i + 1 < args.repeats else "\n", file=sys.stderr, flush=True)
    rows = []
    for name in COMMANDS:
        quick, teardown = (statistics.median(times[name, end]) for end in ENDS)
        rows.append({"command": name, "quick_exit_s": round(quick, 3), "teardown_s": round(teardown, 3)})
        print(f"  {name:<36} {quick:5.2f} s quick exit, {teardown:5.2f} s with the teardown ({teardown / quick:.2f}x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"repeats": args.repeats, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
