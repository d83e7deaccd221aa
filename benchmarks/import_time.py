"""How long `envhub list` takes next to `python -c "import envhub"` (and next to importing gymnax).

Each command runs in a fresh interpreter; medians of --repeats runs.

    python benchmarks/import_time.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c 'import envhub'": [sys.executable, "-c", "import envhub"],
    "envhub list": [sys.executable, "-m", "envhub", "list"],
    "python -c 'import gymnax' (for scale)": [sys.executable, "-c", "import gymnax"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for i in range(args.repeats):
        for name, argv in COMMANDS.items():
            start = time.perf_counter()
            done = subprocess.run(argv, capture_output=True)
            times[name].append(time.perf_counter() - start)
            if done.returncode != 0:
                times[name][-1] = float("nan")
        print(f"\rrepeat {i + 1}/{args.repeats}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    for name, seconds in medians.items():
        print(f"  {name:<40} {seconds:6.2f} s")
    base = medians["python -c 'import envhub'"]
    print(f"envhub list / import envhub: {medians['envhub list'] / base:.2f}x")


if __name__ == "__main__":
    main()
