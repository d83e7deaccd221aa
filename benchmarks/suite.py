"""Run every comparison (one process each), then write results.json, throughput.png and RESULTS.md.

Each comparison script measures envhub and the raw backend doing the same work in one process
and writes rows (see ``_timing.comparison_row``). A comparison whose backend is not installed is
listed as not run, with the reason.

    python benchmarks/suite.py [--quick] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (script, backend module it needs, full args, quick args)
COMPARISONS = [
    (
        "gymnax_cartpole.py",
        "gymnax",
        ["--num-envs", "1,64,1024", "--steps", "1000", "--repeats", "7"],
        ["--num-envs", "1,64", "--steps", "100", "--repeats", "2"],
    ),
    (
        "gymnasium_cartpole.py",
        "gymnasium",
        ["--num-envs", "16,64", "--steps", "500", "--repeats", "5"],
        ["--num-envs", "16", "--steps", "50", "--repeats", "2"],
    ),
    ("envpool_envs.py", "envpool", ["--repeats", "5"], ["--quick"]),
    ("brax_envs.py", "brax", ["--num-envs", "1,64", "--steps", "100", "--repeats", "3"], ["--quick"]),
]


def run_json(argv: list[str]) -> object:
    """Run a benchmark script with ``--json`` to a temporary file; return what it wrote."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        subprocess.run([sys.executable, *argv, "--json", str(out)], check=True, cwd=HERE)
        return json.loads(out.read_text())


def markdown(rows: list[dict], skipped: list[str], imports: dict, memory: dict, machine: dict) -> str:
    lines = [
        "# envhub benchmark results",
        "",
        f"Measured on {machine['machine']}, {machine['cpus']} CPUs, Python {machine['python']}, "
        f"jax {machine['jax']} ({machine['device']}); medians of interleaved repeats, envhub and the raw "
        "backend in the same process. Ratios are envhub / raw throughput (higher is better).",
        "",
        "| backend | env | num_envs | raw (steps/s) | envhub (steps/s) | ratio | envhub variant | raw baseline |",
        "|---|---|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['backend']} | {r['env']} | {r['num_envs']} | {r['raw_steps_per_s']:,.0f} | "
            f"{r['envhub_steps_per_s']:,.0f} | {r['ratio']:.2f} | {r['envhub']} | {r['raw']} |"
        )
    lines += ["", "Not run: " + ("; ".join(skipped) if skipped else "none"), ""]
    if imports:
        lines += ["| command | seconds |", "|---|---:|"] + [f"| `{k}` | {v:.2f} |" for k, v in imports.items()] + [""]
    if memory:
        lines += ["| 1024-env CartPole rollout | peak RSS (MiB) |", "|---|---:|"]
        lines += [f"| {k} | {v:.0f} |" for k, v in memory.items()] + [""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny configurations (a smoke test, not figures)")
    parser.add_argument("--out", default=str(HERE / "results"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    rows: list[dict] = []
    skipped: list[str] = []
    for script, module, full, quick in COMPARISONS:
        if not (HERE / script).exists():
            skipped.append(f"{script} (not written yet)")
        elif importlib.util.find_spec(module) is None:
            skipped.append(f"{script} ({module} not installed)")
        else:
            print(f"== {script}", file=sys.stderr, flush=True)
            try:
                rows += run_json([script, *(quick if args.quick else full)])
            except subprocess.CalledProcessError as exc:
                skipped.append(f"{script} (failed with exit code {exc.returncode}; run it alone to see why)")
    imports = run_json(["import_time.py", "--repeats", "2" if args.quick else "7"])
    memory = run_json(["memory.py", "--steps", "50" if args.quick else "1000"])

    sys.path.insert(0, str(HERE.parent))
    from envhub.tools import bench

    machine = bench.machine()
    (out / "results.json").write_text(
        json.dumps(
            {"machine": machine, "comparisons": rows, "imports": imports, "memory": memory, "not_run": skipped},
            indent=2,
        )
    )
    if rows:  # one panel per backend: this run's results.json and the run files beside it (plot_results.py)
        import plot_results

        plot_results.plot(out, out / "throughput.png")
    results = out / "RESULTS.md"
    # The sections after the generated tables (later per-backend runs, each under its own "## " heading)
    # are kept: a full run replaces only the tables above them.
    kept = results.read_text() if results.is_file() else ""
    later = kept[kept.index("\n## ") + 1 :] if "\n## " in kept else ""
    results.write_text(markdown(rows, skipped, imports, memory, machine).rstrip() + "\n\n" + later)
    print(results.read_text())


if __name__ == "__main__":
    main()
