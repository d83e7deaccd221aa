"""The cost of each way of validating action values: the same lax.scan rollout in every mode.

Envs built in the same process, one per mode (docs/errors.md, "Action values"): ``default``
(``validate_actions=True``, plain ``jax.jit``: the check is a ``checkify.debug_check`` that XLA drops),
``checked`` (the same env run through ``envhub.checked``: checkify on), ``strict``
(``validate_actions="strict"``: a ``lax.cond`` to a host callback) and ``off``
(``validate_actions=False``), plus ``off_again`` (an A/A control: its ratio to ``off`` is the noise of
this run). Rollouts are timed in interleaved repeats, in alternating order, so machine noise hits all
alike. Every step splits the key, samples valid random actions, steps the batch and sums rewards and
observations, so the check never fires: what is measured is the check that passes.

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

# label: (env id, num_envs, scan steps)
CASES = {"gymnax": ("gymnax/CartPole-v1", 1024, 1000), "brax": ("brax/inverted_pendulum", 256, 100)}


MODES = {"default": True, "checked": True, "strict": "strict", "off": False, "off_again": False}


def make(env_id: str, num_envs: int, validate: bool | str):
    with contextlib.redirect_stdout(sys.stderr):  # mujoco prints optional-import notices on stdout
        return envhub.make(env_id, num_envs=num_envs, validate_actions=validate)


def rollout(env, steps: int):
    space = env.action_space

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
    runs = {}
    for mode, validate in MODES.items():
        run = rollout(make(env_id, num_envs, validate), steps)
        runs[mode] = envhub.checked(run) if mode == "checked" else jax.jit(run)
    compiles = {mode: first_call_seconds(lambda r=run: r(key)) for mode, run in runs.items()}
    totals = {mode: float(run(key)) for mode, run in runs.items()}
    assert len(set(totals.values())) == 1, totals  # the same work, the same result
    t = interleaved({mode: lambda r=run: r(key) for mode, run in runs.items()}, repeats)
    off = t["off"]
    return {
        "env": env_id,
        "num_envs": num_envs,
        "steps": steps,
        "repeats": repeats,
        **{f"{mode}_{k}": round(v, 4) for mode, times in t.items() for k, v in times.items()},
        **{f"ratio_wall_{mode}": round(t[mode]["wall_s"] / off["wall_s"], 4) for mode in MODES if mode != "off"},
        **{f"ratio_cpu_{mode}": round(t[mode]["cpu_s"] / off["cpu_s"], 4) for mode in MODES if mode != "off"},
        "env_step_us": round(1e6 * off["wall_s"] / steps, 1),
        "compile_s": {mode: round(s, 2) for mode, s in compiles.items()},
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
        ratios = ", ".join(f"{m} {row[f'ratio_wall_{m}']:.3f}" for m in MODES if m != "off")
        print(
            f"{row['env']} num_envs={row['num_envs']} steps={row['steps']}: off {row['off_wall_s']:.4f} s "
            f"({row['env_step_us']:.0f} us per step); wall time / off: {ratios} (off_again is the A/A noise)",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
