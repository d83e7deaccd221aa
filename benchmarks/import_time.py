"""How long `import envhub` and `envhub list` take, next to `import jax` (and gymnax, for scale), and a user's first
gymnax commands: making CartPole, `envhub info` of it and of a mistyped id (exit code 3, as expected).

Each command runs in a fresh interpreter; medians of --repeats interleaved runs. ``--only TEXT`` runs the commands
whose name holds TEXT (and `import jax`, the scale).

    python benchmarks/import_time.py [--repeats 7] [--only gymnax] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

ENVHUB = [sys.executable, "-m", "envhub"]
#: name: (command, the exit code it should end with)
COMMANDS = {
    "import jax": ([sys.executable, "-c", "import jax"], 0),
    "import envhub": ([sys.executable, "-c", "import envhub"], 0),
    "envhub list": ([*ENVHUB, "list"], 0),
    "import gymnax": ([sys.executable, "-c", "import gymnax"], 0),
    "make gymnax/CartPole-v1": ([sys.executable, "-c", "import envhub; envhub.make('gymnax/CartPole-v1')"], 0),
    "envhub info gymnax/CartPole-v1": ([*ENVHUB, "info", "gymnax/CartPole-v1"], 0),
    "envhub info gymnax/CartPolee-v1": ([*ENVHUB, "info", "gymnax/CartPolee-v1"], 3),  # unknown id: exit 3
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", default="", metavar="TEXT")
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    chosen = {name: cmd for name, cmd in COMMANDS.items() if args.only in name or name == "import jax"}
    times: dict[str, list[float]] = {name: [] for name in chosen}
    for i in range(args.repeats):
        for name, (argv, code) in chosen.items():
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True)
            times[name].append(time.perf_counter() - start if done.returncode == code else float("nan"))
        print(f"\rrepeat {i + 1}/{args.repeats}", end="" if i + 1 < args.repeats else "\n", file=sys.stderr, flush=True)
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    for name, seconds in medians.items():
        print(f"  {name:<32} {seconds:6.2f} s   ({seconds / medians['import jax']:.2f}x import jax)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({name: round(s, 3) for name, s in medians.items()}, f, indent=2)


if __name__ == "__main__":
    main()
