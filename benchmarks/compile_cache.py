"""JAX's persistent compilation cache on envhub rollouts: first process (empty cache) vs second (warm).

For each env, a fresh Python process with an empty cache directory (JAX's own options, set before
anything compiles: ``jax_compilation_cache_dir``, ``jax_persistent_cache_min_compile_time_secs=0``,
``jax_persistent_cache_min_entry_size_bytes=-1``) makes the env and runs a jitted
``envhub.rollout`` of random actions (``--num-envs`` envs, ``--steps`` steps) once; then a second
fresh process with the same directory does the same. Each process times ``envhub.make``, tracing and
lowering, XLA compile (``.lower(key).compile()``, where the cache is read and written) and the first
call, and counts JAX's cache events (hits, misses); the parent counts the entries in the directory.
``brax/inverted_pendulum strict`` is the same env with ``validate_actions="strict"``, whose host
callback keeps the rollout out of the cache. Medians over ``--repeats`` (a new directory each).

    nice python benchmarks/compile_cache.py [--backends brax,playground,craftax,gymnax] [--repeats 2]
        [--num-envs 8] [--steps 50] [--json benchmarks/results/compile_cache.json] [--docs docs/performance.md]
    python benchmarks/compile_cache.py --table-from benchmarks/results/compile_cache.json [--docs ...]

The JSON is the run file; the table between the markers in ``--docs`` is rendered from it (also
alone, with ``--table-from``). ``--docs ''`` leaves the docs alone.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUN_FILE = "benchmarks/results/compile_cache.json"
BEGIN, END = "<!-- compile_cache table: begin -->", "<!-- compile_cache table: end -->"

# label: (env id, make kwargs)
CASES: dict[str, tuple[str, dict]] = {
    "brax/ant": ("brax/ant", {}),
    "brax/inverted_pendulum": ("brax/inverted_pendulum", {}),
    "brax/inverted_pendulum strict": ("brax/inverted_pendulum", {"validate_actions": "strict"}),
    "playground/CartpoleBalance": ("playground/CartpoleBalance", {"impl": "jax"}),
    "craftax/Craftax-Classic-Symbolic-v1": ("craftax/Craftax-Classic-Symbolic-v1", {}),
    "gymnax/CartPole-v1": ("gymnax/CartPole-v1", {}),
}
PHASES = ("make_s", "lower_s", "compile_s", "run_s")


# ---------------------------------------------------------------- the child: one process, one env


def child(label: str, cache_dir: str, num_envs: int, steps: int) -> dict:
    """Make ``label``'s env and run its rollout once, with the persistent cache in ``cache_dir``."""
    import jax

    jax.config.update("jax_compilation_cache_dir", cache_dir)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    events: dict[str, int] = {}
    jax.monitoring.register_event_listener(
        lambda event, **_: (
            events.__setitem__(event, events.get(event, 0) + 1) if event.startswith("/jax/compilation_cache/") else None
        )
    )

    import contextlib

    import envhub

    env_id, kwargs = CASES[label]
    times: dict[str, float] = {}
    start = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # mujoco prints optional-import notices on stdout
        env = envhub.make(env_id, num_envs=num_envs, **kwargs)
    times["make_s"] = time.perf_counter() - start
    policy = envhub.random_policy(env)

    def run(key):
        return envhub.rollout(env, policy, key, steps)

    key = jax.random.key(0)
    start = time.perf_counter()
    lowered = jax.jit(run).lower(key)
    times["lower_s"] = time.perf_counter() - start
    start = time.perf_counter()
    compiled = lowered.compile()
    times["compile_s"] = time.perf_counter() - start
    start = time.perf_counter()
    _, _, trajectory = jax.block_until_ready(compiled(key))
    times["run_s"] = time.perf_counter() - start
    times["first_call_s"] = times["lower_s"] + times["compile_s"] + times["run_s"]
    times["total_s"] = times["make_s"] + times["first_call_s"]
    short = {e.rsplit("/", 1)[1]: n for e, n in events.items()}
    return {
        **{k: round(v, 3) for k, v in times.items()},
        "events": short,
        "reward": float(trajectory.reward.sum()),
        "platform": jax.devices()[0].platform,
    }


# ---------------------------------------------------------------- the parent: cold and warm processes


def entries(cache_dir: str) -> int:
    return sum(1 for p in Path(cache_dir).iterdir() if p.name.endswith("-cache"))


def spawn(label: str, cache_dir: str, args: argparse.Namespace) -> dict:
    command = [sys.executable, __file__, "--child", label, "--cache-dir", cache_dir]
    command += ["--num-envs", str(args.num_envs), "--steps", str(args.steps)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    wall = time.perf_counter() - start
    if done.returncode:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"{label}: the child process failed ({done.returncode})")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {**result, "process_s": round(wall, 3), "entries": entries(cache_dir)}


def median(rows: list[dict], field: str) -> float:
    return round(statistics.median(r[field] for r in rows), 3)


def bench(label: str, args: argparse.Namespace) -> dict:
    cold, warm = [], []
    for i in range(args.repeats):
        cache_dir = tempfile.mkdtemp(prefix="envhub-compile-cache-")
        try:
            cold.append(spawn(label, cache_dir, args))
            warm.append(spawn(label, cache_dir, args))
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
        c, w = cold[-1], warm[-1]
        print(
            f"  {label:<38} repeat {i + 1}/{args.repeats}: first call cold {c['first_call_s']:6.2f} s "
            f"(compile {c['compile_s']:6.2f}, make {c['make_s']:5.2f}), warm {w['first_call_s']:6.2f} s "
            f"(compile {w['compile_s']:6.2f}, make {w['make_s']:5.2f}), entries {c['entries']} -> {w['entries']}, "
            f"warm hits {w['events'].get('cache_hits', 0)} misses {w['events'].get('cache_misses', 0)}",
            flush=True,
        )
    row = {"case": label, "env": CASES[label][0], "make_kwargs": CASES[label][1], "repeats": args.repeats}
    for side, rows in (("cold", cold), ("warm", warm)):
        row[side] = {f: median(rows, f) for f in (*PHASES, "first_call_s", "total_s", "process_s")}
        row[side]["entries"] = int(statistics.median(r["entries"] for r in rows))
        row[side]["cache_hits"] = int(statistics.median(r["events"].get("cache_hits", 0) for r in rows))
        row[side]["cache_misses"] = int(statistics.median(r["events"].get("cache_misses", 0) for r in rows))
    row["ratio_total"] = round(row["warm"]["total_s"] / row["cold"]["total_s"], 3)
    row["ratio_first_call"] = round(row["warm"]["first_call_s"] / row["cold"]["first_call_s"], 3)
    row["ratio_compile"] = round(row["warm"]["compile_s"] / row["cold"]["compile_s"], 3)
    row["runs"] = {"cold": cold, "warm": warm}
    return row


# ---------------------------------------------------------------- the docs table, from the run file


def table(run: dict) -> str:
    lines = [
        f"Run file: `{RUN_FILE}` ({run['date']}; {run['machine']}; jax {run['jax']}, {run['platform']}; "
        f"{run['num_envs']} envs, {run['steps']}-step `envhub.rollout` of random actions; medians of "
        f"{run['repeats']} cold/warm process pairs; load average {run['load_start']} at the start, "
        f"{run['load_end']} at the end; envhub at {short_source(run)}). Command: `{run['command']}`.",
        "",
        "| env | first call cold (s) | warm (s) | warm / cold | XLA compile cold → warm (s) | warm / cold "
        "| make + first call cold → warm (s) | warm / cold | cache entries after cold → warm | warm hits |",
        "|---|---:|---:|---:|---|---:|---|---:|---|---:|",
    ]
    for row in run["rows"]:
        c, w = row["cold"], row["warm"]
        lines.append(
            f"| {row['case']} | {c['first_call_s']:.2f} | {w['first_call_s']:.2f} | **{row['ratio_first_call']:.2f}** | "
            f"{c['compile_s']:.2f} → {w['compile_s']:.2f} | {row['ratio_compile']:.2f} | "
            f"{c['total_s']:.2f} → {w['total_s']:.2f} | {row['ratio_total']:.2f} | "
            f"{c['entries']} → {w['entries']} | {w['cache_hits']} |"
        )
    return "\n".join(lines)


def short_source(run: dict) -> str:
    start, end = run.get("source_start", "n/a"), run.get("source_end", "n/a")
    commit, _, changes = start.partition(" + uncommitted changes to ")
    text = commit + (
        f" with uncommitted changes to {len(changes.split(', '))} files (listed in the run file)" if changes else ""
    )
    return text if start == end else f"{text}, changed during the run"


def write_docs(run: dict, docs: str) -> None:
    path = ROOT / docs
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{docs} has no '{BEGIN}' ... '{END}' markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(f"{head}{BEGIN}\n{table(run)}\n{END}{tail}", encoding="utf-8")
    print(f"wrote the table into {docs}")


def source_state() -> str:
    """The commit, and the uncommitted changes to envhub/ and plugins/ (the code the children import)."""
    try:
        git = ["git", "-C", str(ROOT)]
        commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        changed = subprocess.run(
            [*git, "status", "--porcelain", "--", "envhub", "plugins"], capture_output=True, text=True
        ).stdout.split("\n")
        changed = [line[3:] for line in changed if line.strip()]
    except OSError:
        return "n/a"
    return f"{commit}" + (f" + uncommitted changes to {', '.join(changed)}" if changed else "")


def load_average() -> str:
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--backends", default="brax,playground,craftax,gymnax", help="cases whose env id has a prefix here"
    )
    parser.add_argument("--no-strict", action="store_true", help="skip the validate_actions='strict' case")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--json", default=RUN_FILE, metavar="PATH", help="the run file ('' for none)")
    parser.add_argument("--docs", default="docs/performance.md", help="where the table goes ('' for nowhere)")
    parser.add_argument("--table-from", default=None, metavar="PATH", help="only render the table from a run file")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.cache_dir, args.num_envs, args.steps)))
        return
    if args.table_from:
        run = json.loads((ROOT / args.table_from).read_text())
        print(table(run))
        if args.docs:
            write_docs(run, args.docs)
        return

    import jax

    prefixes = args.backends.split(",")
    labels = [
        label
        for label, (env_id, kwargs) in CASES.items()
        if env_id.split("/")[0] in prefixes and not (args.no_strict and kwargs.get("validate_actions") == "strict")
    ]
    run = {
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "jax": jax.__version__,
        "num_envs": args.num_envs,
        "steps": args.steps,
        "repeats": args.repeats,
        "command": "python benchmarks/compile_cache.py " + " ".join(sys.argv[1:]),
        "load_start": load_average(),
        "source_start": source_state(),
    }
    print(f"jax {jax.__version__}; {len(labels)} cases, {args.repeats} cold/warm pairs each", flush=True)
    rows = [bench(label, args) for label in labels]
    run["load_end"] = load_average()
    run["source_end"] = source_state()
    run["platform"] = rows[0]["runs"]["cold"][0]["platform"] if rows else "n/a"
    run["rows"] = rows
    print()
    print(table(run))
    if args.json:
        with open(ROOT / args.json, "w") as f:
            json.dump(run, f, indent=2)
            f.write("\n")
        print(f"wrote {args.json}")
    if args.docs:
        write_docs(run, args.docs)


if __name__ == "__main__":
    main()
