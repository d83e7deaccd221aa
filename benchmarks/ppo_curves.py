"""Learning curves of examples/ppo.py on four envhub environments, with the git commit they came from.

Runs ``examples/ppo.py`` once per environment (one process each, one after the other) and writes
``benchmarks/results/ppo/``: ``<name>/metrics.json`` and ``<name>/curve.png`` per run, ``curves.png``
(all curves) and ``README.md`` (a markdown table: final return, steps/s, time, the exact command).

    nice python benchmarks/ppo_curves.py [--only cartpole,acrobot] [--out benchmarks/results/ppo]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> (env id, extra flags for examples/ppo.py); the settings the example's docstring documents.
RUNS: dict[str, tuple[str, list[str]]] = {
    "gymnax-cartpole": ("gymnax/CartPole-v1", []),
    "gymnax-acrobot": ("gymnax/Acrobot-v1", []),
    "brax-inverted-pendulum": (
        "brax/inverted_pendulum",
        ["--num-envs", "32", "--num-steps", "64", "--total-steps", "500000", "--lr", "1e-3", "--ent-coef", "0"],
    ),
    "gymnasium-cartpole": ("gymnasium/CartPole-v1", ["--total-steps", "1000000"]),
}


def git_commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    return commit + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def plot_all(results: dict[str, dict], path: Path, commit: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4 * len(results), 3.4), squeeze=False)
    for ax, metrics in zip(axes[0], results.values()):
        pts = [p for p in metrics["curve"] if p["mean_return"] is not None]
        ax.plot([p["env_steps"] for p in pts], [p["mean_return"] for p in pts])
        ax.set(title=metrics["env_id"], xlabel="env steps")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean episode return")
    fig.suptitle(f"examples/ppo.py, seed 0, commit {commit}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def table(results: dict[str, dict], commands: dict[str, str], commit: str, load: str) -> str:
    lines = [
        "# PPO learning curves (examples/ppo.py)",
        "",
        f"Commit `{commit}`, {platform.machine()} with {os.cpu_count()} CPUs (shared; load average before "
        f"the runs: {load}), written by `python benchmarks/ppo_curves.py`. `final return`: mean return of "
        "the episodes finished in the last 10 % of the updates; steps/s excludes compilation.",
        "",
        "![curves](curves.png)",
        "",
        "| env | final return | env steps | steps/s | train s | compile s | command |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, m in results.items():
        final = "n/a" if m["final_return"] is None else f"{m['final_return']:.1f}"
        lines.append(
            f"| `{m['env_id']}` | {final} | {m['total_env_steps']:,} | {m['steps_per_second']:,.0f} "
            f"| {m['train_seconds']:.0f} | {m['compile_seconds']:.0f} | `{commands[name]}` |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=None, help="comma-separated run names: " + ",".join(RUNS))
    parser.add_argument("--out", type=lambda s: Path(s).resolve(), default=ROOT / "benchmarks" / "results" / "ppo")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(RUNS)
    commit, load = git_commit(), " ".join(f"{x:.1f}" for x in os.getloadavg())
    results, commands = {}, {}
    for name in names:
        env_id, flags = RUNS[name]
        out = args.out / name
        cmd = [sys.executable, "examples/ppo.py", env_id, *flags, "--out", os.path.relpath(out, ROOT)]
        commands[name] = " ".join(["python", *cmd[1:]])
        print(f"== {commands[name]}", flush=True)
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True)
        results[name] = json.loads((out / "metrics.json").read_text())
        print(f"   {time.perf_counter() - start:.0f} s in all", flush=True)
    plot_all(results, args.out / "curves.png", commit)
    (args.out / "README.md").write_text(table(results, commands, commit, load))
    print(f"wrote {args.out}/README.md and curves.png")


if __name__ == "__main__":
    main()
