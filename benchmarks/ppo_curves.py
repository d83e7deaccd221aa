"""examples/ppo.py on four envhub environments and several seeds: the run file the docs quote.

Runs ``examples/ppo.py`` once per environment and seed (one process each, one after the other) and
writes ``benchmarks/results/ppo/``:

- ``runs.json``, the run file: per environment the exact command, the config, and per seed the final
  return (the final policy's mean return over ``eval_episodes`` whole episodes, actions sampled as
  in training), the training-window return, steps/s, times; with the git commit, the files that
  differed from it, the machine, its load and the jax version of the run;
- ``<name>/seed-<k>/metrics.json``, what each run wrote (with its learning curve);
- ``curves.png`` (every seed's curve) and ``README.md`` (the table).

``--only`` reruns some environments and keeps the others' entries in ``runs.json``; ``--replot``
trains nothing and rewrites ``README.md`` and ``curves.png`` from ``runs.json``.

    nice python benchmarks/ppo_curves.py [--only gymnax-cartpole,gymnax-acrobot] [--seeds 0,1,2] [--replot]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "ppo"

#: name -> (env id, extra flags for examples/ppo.py); the settings docs/training.md documents.
RUNS: dict[str, tuple[str, list[str]]] = {
    "gymnax-cartpole": ("gymnax/CartPole-v1", []),
    "gymnax-acrobot": ("gymnax/Acrobot-v1", []),
    "brax-inverted-pendulum": (
        "brax/inverted_pendulum",
        ["--num-envs", "32", "--num-steps", "64", "--total-steps", "500000", "--lr", "1e-3", "--ent-coef", "0"],
    ),
    "gymnasium-cartpole": ("gymnasium/CartPole-v1", []),
}
#: What the code that produced a run is: the files whose changes since the commit ``dirty`` lists.
CODE = ["examples/ppo.py", "benchmarks/ppo_curves.py", "envhub", "plugins", "pyproject.toml"]
FINAL_RETURN = (
    "the final policy's mean undiscounted return over eval_episodes whole episodes (one per env of a fresh "
    "batch, each played from its reset to its first end, actions sampled from the policy as in training)"
)
TRAIN_RETURN = (
    "mean return of the episodes that ended during the last 10 % of the updates (the stochastic policy while learning)"
)


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def provenance() -> dict[str, Any]:
    """Where and on what a run happened: commit, changed files, machine, load, versions."""
    import jax

    dirty = git("diff", "--name-only", "HEAD", "--", *CODE).splitlines()
    return {
        "commit": git("rev-parse", "HEAD") or "unknown",
        "dirty": dirty,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}",
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "jax": jax.__version__,
        "jax_backend": jax.default_backend(),
    }


def run_seeds(name: str, seeds: list[int], out: Path) -> dict[str, Any]:
    """Train ``name`` once per seed, each in its own process; the run file's entry for it."""
    env_id, flags = RUNS[name]
    entry: dict[str, Any] = {"env_id": env_id, **provenance()}
    command = ["python", "examples/ppo.py", env_id, *flags, "--seed", "{seed}", "--no-plot"]
    entry["command"] = " ".join([*command, "--out", os.path.relpath(out / name / "seed-{seed}", ROOT)])
    per_seed = {}
    for seed in seeds:
        seed_out = out / name / f"seed-{seed}"
        cmd = [sys.executable, *command[1:], "--out", os.path.relpath(seed_out, ROOT)]
        cmd = [c.replace("{seed}", str(seed)) for c in cmd]
        print(f"== {' '.join(cmd[1:])}", flush=True)
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True)
        metrics = json.loads((seed_out / "metrics.json").read_text())
        keep = ("final_return", "final_return_std", "eval_episodes", "eval_unfinished", "train_return_last_10pct")
        keep += ("steps_per_second", "steps_per_second_median_chunk", "total_env_steps", "train_seconds")
        per_seed[str(seed)] = {k: metrics[k] for k in keep + ("compile_seconds", "eval_seconds")}
        per_seed[str(seed)]["wall_seconds"] = time.perf_counter() - start
        entry["config"] = {k: v for k, v in metrics["config"].items() if k != "seed"}
        entry["make_kwargs"] = metrics["make_kwargs"]
        print(f"   {time.perf_counter() - start:.0f} s in all", flush=True)
    finals = [r["final_return"] for r in per_seed.values()]
    entry["seeds"] = per_seed
    entry["mean_final_return"] = statistics.fmean(finals)
    entry["min_final_return"] = min(finals)
    entry["median_steps_per_second"] = statistics.median(r["steps_per_second_median_chunk"] for r in per_seed.values())
    return entry


def plot_all(runs: dict[str, dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(4 * len(runs), 3.4), squeeze=False)
    for ax, (name, entry) in zip(axes[0], runs.items()):
        for seed in entry["seeds"]:
            curve = json.loads((out / name / f"seed-{seed}" / "metrics.json").read_text())["curve"]
            pts = [p for p in curve if p["mean_return"] is not None]
            ax.plot([p["env_steps"] for p in pts], [p["mean_return"] for p in pts], label=f"seed {seed}", lw=1)
        ax.set(title=entry["env_id"], xlabel="env steps")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean return of the episodes ending")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("examples/ppo.py: benchmarks/results/ppo/runs.json", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "curves.png", dpi=100)
    plt.close(fig)


def table(runs: dict[str, dict]) -> str:
    lines = [
        "# PPO runs (examples/ppo.py)",
        "",
        "Written by `python benchmarks/ppo_curves.py` from `runs.json` (the run file: commit, machine, jax "
        f"version, config and per-seed figures). **final return**: {FINAL_RETURN}. **training return**: "
        f"{TRAIN_RETURN}. **steps/s**: training only (no compilation, no evaluation), the median over a run's "
        "timed chunks of updates, then the median over seeds; measured on shared CPUs that other jobs loaded "
        "(`load_average_before` in runs.json), so it varies from run to run (compare the seeds' own figures there).",
        "",
        "![curves](curves.png)",
        "",
        "<!-- --8<-- [start:table] -->",
        "| env | seeds | final return per seed | mean | training return per seed | env steps | steps/s | commit | command |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in runs.values():
        seeds = entry["seeds"]
        finals = " / ".join(f"{r['final_return']:.1f}" for r in seeds.values())
        trains = " / ".join("n/a" if r["train_return_last_10pct"] is None else f"{r['train_return_last_10pct']:.1f}"
                            for r in seeds.values())  # fmt: skip
        steps = next(iter(seeds.values()))["total_env_steps"]
        lines.append(
            f"| `{entry['env_id']}` | {', '.join(seeds)} | {finals} | **{entry['mean_final_return']:.1f}** | {trains} "
            f"| {steps:,} | {entry['median_steps_per_second']:,.0f} | `{entry['commit'][:12]}` | `{entry['command']}` |"
        )
    return "\n".join([*lines, "<!-- --8<-- [end:table] -->"]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=None, help="comma-separated run names: " + ",".join(RUNS))
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    parser.add_argument("--out", type=lambda s: Path(s).resolve(), default=OUT)
    parser.add_argument("--replot", action="store_true", help="train nothing: README.md and curves.png from runs.json")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(RUNS)
    seeds = [int(s) for s in args.seeds.split(",")]
    run_file = args.out / "runs.json"
    old = json.loads(run_file.read_text())["runs"] if run_file.exists() else {}
    names = [name for name in names if name in old] if args.replot else names
    runs = {name: old[name] for name in RUNS if name in old and name not in names}
    for name in names:
        runs[name] = old[name] if args.replot else run_seeds(name, seeds, args.out)
    runs = {name: runs[name] for name in RUNS if name in runs}  # a fixed order
    doc = {"final_return": FINAL_RETURN, "train_return_last_10pct": TRAIN_RETURN, "runs": runs}
    run_file.write_text(json.dumps(doc, indent=2) + "\n")
    plot_all(runs, args.out)
    (args.out / "README.md").write_text(table(runs))
    print(f"wrote {run_file}, README.md and curves.png")


if __name__ == "__main__":
    main()
