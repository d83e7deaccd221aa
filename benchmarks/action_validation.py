"""The cost of validating action values: the same jitted lax.scan rollout with and without the check.

Two envs built in the same process, one with ``validate_actions=False``; their rollouts are timed in
interleaved repeats, so machine noise hits both alike. Every step splits the key, samples valid
random actions and steps the batch, so the check never fires: what is measured is the cost of the
check that passes (one reduction over the batch and one branch per step).

    python benchmarks/action_validation.py [--cases gymnax,brax] [--repeats 9] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

import jax
from _timing import first_call_seconds, interleaved_medians

import envhub

# (label, env id, num_envs, scan steps, make kwargs)
CASES = {
    "gymnax": ("gymnax/CartPole-v1", 1024, 1000, {}),
    "brax": ("brax/inverted_pendulum", 256, 100, {}),
}


def rollout(env_id: str, num_envs: int, steps: int, validate: bool, kwargs: dict):
    with contextlib.redirect_stdout(sys.stderr):  # mujoco prints optional-import notices on stdout
        env = envhub.make(env_id, num_envs=num_envs, validate_actions=validate, **kwargs)
    space = env.action_space

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key)

        def body(carry, key):
            state, total = carry
            action_key, step_key = jax.random.split(key)
            state, ts = env.step(step_key, state, space.sample(action_key))
            return (state, total + ts.reward.sum()), None

        (_, total), _ = jax.lax.scan(body, (state, 0.0), jax.random.split(key, steps))
        return total

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="gymnax,brax", help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the rows as JSON")
    args = parser.parse_args()

    key = jax.random.key(0)
    rows = []
    print(f"median of {args.repeats} interleaved repeats (jax {jax.__version__}, {jax.devices()[0].platform})")
    for case in args.cases.split(","):
        env_id, num_envs, steps, kwargs = CASES[case]
        runs = {
            "validated": rollout(env_id, num_envs, steps, True, kwargs),
            "unvalidated": rollout(env_id, num_envs, steps, False, kwargs),
        }
        compiles = {name: first_call_seconds(lambda r=run: r(key)) for name, run in runs.items()}
        totals = {name: float(run(key)) for name, run in runs.items()}
        assert totals["validated"] == totals["unvalidated"], totals  # the same work, the same result
        medians = interleaved_medians(
            {name: lambda r=run: jax.block_until_ready(r(key)) for name, run in runs.items()}, args.repeats
        )
        ratio = medians["validated"] / medians["unvalidated"]
        row = {
            "env": env_id,
            "num_envs": num_envs,
            "steps": steps,
            "validated_s": round(medians["validated"], 4),
            "unvalidated_s": round(medians["unvalidated"], 4),
            "time_ratio": round(ratio, 4),
            "cost_percent": round(100 * (ratio - 1), 2),
            "compile_validated_s": round(compiles["validated"], 2),
            "compile_unvalidated_s": round(compiles["unvalidated"], 2),
        }
        rows.append(row)
        print(
            f"{env_id} num_envs={num_envs} steps={steps}: validated {row['validated_s']:.4f} s, "
            f"unvalidated {row['unvalidated_s']:.4f} s, ratio {ratio:.3f} ({row['cost_percent']:+.1f} %)",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
