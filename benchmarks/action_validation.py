"""The cost of validating action values: the same jitted lax.scan rollout with and without the check.

Three envs built in the same process: one validating (the default), two with ``validate_actions=False``
(the second is an A/A control: its ratio to the first is the noise of this run). Their rollouts are
timed in interleaved repeats, in alternating order, so machine noise hits all alike. Every step splits
the key, samples valid random actions, steps the batch and sums rewards and observations, so the
check never fires: what is measured is the check that passes (one reduction over the batch, one
branch). Then the check alone: a scan that only samples the batch's actions, with and without the
check, gives its cost per step in microseconds, which is also shown as a share of one env step.

    python benchmarks/action_validation.py [--cases gymnax,brax] [--repeats 15] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time

import jax
from _timing import first_call_seconds

import envhub
from envhub.action_check import check_values

# label: (env id, num_envs, scan steps)
CASES = {"gymnax": ("gymnax/CartPole-v1", 1024, 1000), "brax": ("brax/inverted_pendulum", 256, 100)}


def make(env_id: str, num_envs: int, validate: bool):
    with contextlib.redirect_stdout(sys.stderr):  # mujoco prints optional-import notices on stdout
        return envhub.make(env_id, num_envs=num_envs, validate_actions=validate)


def rollout(env, steps: int):
    space = env.action_space

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key)

        def body(carry, key):
            state, total = carry
            action_key, step_key = jax.random.split(key)
            state, ts = env.step(step_key, state, space.sample(action_key))
            # the observations too: brax's inverted_pendulum rewards 1 per step, so XLA would drop the physics
            return (state, total + ts.reward.sum() + ts.obs.sum()), None

        (_, total), _ = jax.lax.scan(body, (state, 0.0), jax.random.split(key, steps))
        return total

    return run


def check_alone(env, steps: int, validate: bool):
    space = env.action_space

    @jax.jit
    def run(key):
        def body(total, key):
            action = space.sample(key)
            action = check_values(env.id, space, action) if validate else action
            return total + action.sum(), None

        return jax.lax.scan(body, 0.0, jax.random.split(key, steps))[0]

    return run


def interleaved(runs: dict, repeats: int) -> dict[str, dict[str, float]]:
    """Median wall and CPU (this process, all threads) seconds of each run; repeats interleaved, order alternating."""
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for i in range(repeats):
        for name, run in (reversed if i % 2 else iter)(list(runs.items())):
            w, c = time.perf_counter(), time.process_time()
            jax.block_until_ready(run())
            wall[name].append(time.perf_counter() - w)
            cpu[name].append(time.process_time() - c)
        print(f"\rrepeat {i + 1}/{repeats}", end="" if i + 1 < repeats else "\n", file=sys.stderr, flush=True)
    return {name: {"wall_s": statistics.median(wall[name]), "cpu_s": statistics.median(cpu[name])} for name in runs}


def measure(case: str, repeats: int, key: jax.Array) -> dict:
    env_id, num_envs, steps = CASES[case]
    envs = {"validated": make(env_id, num_envs, True), "unvalidated": make(env_id, num_envs, False)}
    envs["unvalidated_again"] = make(env_id, num_envs, False)
    runs = {name: rollout(env, steps) for name, env in envs.items()}
    compiles = {name: first_call_seconds(lambda r=run: r(key)) for name, run in runs.items()}
    totals = {name: float(run(key)) for name, run in runs.items()}
    assert len(set(totals.values())) == 1, totals  # the same work, the same result
    t = interleaved({name: lambda r=run: r(key) for name, run in runs.items()}, repeats)
    alone = {v: check_alone(envs["validated"], steps, v) for v in (True, False)}
    for run in alone.values():
        run(key)  # compile
    a = interleaved({str(v): lambda r=run: r(key) for v, run in alone.items()}, repeats)
    check_us = 1e6 * (a["True"]["wall_s"] - a["False"]["wall_s"]) / steps
    step_us = 1e6 * t["unvalidated"]["wall_s"] / steps
    return {
        "env": env_id,
        "num_envs": num_envs,
        "steps": steps,
        "repeats": repeats,
        **{f"{name}_{k}": round(v, 4) for name, times in t.items() for k, v in times.items()},
        "ratio_wall": round(t["validated"]["wall_s"] / t["unvalidated"]["wall_s"], 4),
        "ratio_cpu": round(t["validated"]["cpu_s"] / t["unvalidated"]["cpu_s"], 4),
        "noise_ratio_wall": round(t["unvalidated_again"]["wall_s"] / t["unvalidated"]["wall_s"], 4),
        "noise_ratio_cpu": round(t["unvalidated_again"]["cpu_s"] / t["unvalidated"]["cpu_s"], 4),
        "check_alone_us_per_step": round(check_us, 2),
        "env_step_us": round(step_us, 1),
        "check_alone_percent_of_step": round(100 * check_us / step_us, 3),
        "compile_s": {name: round(s, 2) for name, s in compiles.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="gymnax,brax", help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the rows as JSON")
    args = parser.parse_args()

    key = jax.random.key(0)
    print(
        f"medians of {args.repeats} interleaved repeats (jax {jax.__version__}, {jax.devices()[0].platform}, ", end=""
    )
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start)")
    rows = []
    for case in args.cases.split(","):
        row = measure(case, args.repeats, key)
        rows.append(row)
        print(
            f"{row['env']} num_envs={row['num_envs']} steps={row['steps']}: validated {row['validated_wall_s']:.4f} s, "
            f"unvalidated {row['unvalidated_wall_s']:.4f} s; validated/unvalidated {row['ratio_wall']:.3f} wall, "
            f"{row['ratio_cpu']:.3f} cpu (A/A noise {row['noise_ratio_wall']:.3f} wall, {row['noise_ratio_cpu']:.3f} "
            f"cpu); the check alone {row['check_alone_us_per_step']:.1f} us per step = "
            f"{row['check_alone_percent_of_step']:.2f} % of a {row['env_step_us']:.0f} us step",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
