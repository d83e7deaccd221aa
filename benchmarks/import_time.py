"""How long `import envhub` and `envhub list` take, next to `import jax` (and gymnax, for scale).

Each command runs in a fresh interpreter; medians of --repeats interleaved runs.

    python benchmarks/import_time.py [--repeats 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "import jax": [sys.executable, "-c", "import jax"],
    "import envhub": [sys.executable, "-c", "import envhub"],
    "envhub list": [sys.executable, "-m", "envhub", "list"],
    "import gymnax": [sys.executable, "-c", "import gymnax"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for i in range(args.repeats):
        for name, argv in COMMANDS.items():
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True)
            times[name].append(time.perf_counter() - start if done.returncode == 0 else float("nan"))
        print(f"\rrepeat {i + 1}/{args.repeats}", end="" if i + 1 < args.repeats else "\n", file=sys.stderr, flush=True)
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    for name, seconds in medians.items():
        print(f"  {name:<16} {seconds:6.2f} s   ({seconds / medians['import jax']:.2f}x import jax)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({name: round(s, 3) for name, s in medians.items()}, f, indent=2)


if __name__ == "__main__":
    main()
