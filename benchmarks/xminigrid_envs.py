"""envhub's xminigrid backend vs xminigrid's own loop: jitted lax.scan, batched with vmap.

The raw loop is what xminigrid's README trains with: ``GymAutoResetWrapper`` (same-step reset, a
real ``reset`` per episode from the key in the state), ``jax.vmap`` over the batch, ``lax.scan``.
envhub runs with real resets (a fresh initial state per episode; batched, from spares made
num_envs at a time, see envhub.native.resets). Both loops do the same work per step: split the key,
sample random actions, step every environment, accumulate reward and episode ends. Compile time
is lower + compile of the whole jitted rollout (init and scan).

    python benchmarks/xminigrid_envs.py [--env XLand-MiniGrid-R1-9x9] [--num-envs 64,1024]
        [--max-steps 50] [--steps 200] [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import argparse

import jax
import xminigrid
from _timing import comparison_row, envhub_random_rollout, time_rollouts, write_json
from xminigrid.wrappers import GymAutoResetWrapper

import envhub


def raw_xminigrid_rollout(name: str, num_envs: int, steps: int, max_steps: int):
    env, params = xminigrid.make(name, max_steps=max_steps)
    env = GymAutoResetWrapper(env)
    reset = jax.vmap(env.reset, in_axes=(None, 0))
    step = jax.vmap(env.step, in_axes=(None, 0, 0))

    def run(key):
        init_key, key = jax.random.split(key)
        timestep = reset(params, jax.random.split(init_key, num_envs))

        def body(carry, key):
            timestep, total, ends = carry
            action_key, _ = jax.random.split(key)
            actions = jax.random.randint(action_key, (num_envs,), 0, env.num_actions(params))
            timestep = step(params, timestep, actions)
            return (timestep, total + timestep.reward.sum(), ends + timestep.last().sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (timestep, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def envhub_rollout(name: str, num_envs: int, steps: int, max_steps: int):
    env = envhub.make(f"xminigrid/{name}", num_envs=num_envs, max_episode_steps=max_steps)
    return envhub_random_rollout(env, steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="XLand-MiniGrid-R1-9x9")
    parser.add_argument("--num-envs", default="64,1024", help="comma-separated batch sizes")
    parser.add_argument("--max-steps", type=int, default=50, help="the time limit (episodes end often)")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    args = parser.parse_args()

    key = jax.random.key(0)
    rows = []
    print(
        f"{args.env}, max_steps={args.max_steps}, {args.steps} scan steps, median of {args.repeats} interleaved "
        f"repeats (jax {jax.__version__}, xminigrid {xminigrid.__version__}, {jax.devices()[0].platform})"
    )
    for num_envs in [int(n) for n in args.num_envs.split(",")]:
        runs = {
            "xminigrid (raw)": raw_xminigrid_rollout(args.env, num_envs, args.steps, args.max_steps),
            "envhub": envhub_rollout(args.env, num_envs, args.steps, args.max_steps),
        }
        medians, compiles, ends = time_rollouts(runs, key, args.repeats)
        assert len(set(ends.values())) == 1, f"not the same work: episode ends {ends}"
        row = comparison_row(
            "xminigrid", args.env, num_envs, args.steps, medians, compiles, "envhub", "xminigrid (raw)"
        )
        rows.append(row)
        print(
            f"  num_envs={num_envs:<6} raw {row['raw_steps_per_s'] / 1e3:9.1f} k/s   envhub "
            f"{row['envhub_steps_per_s'] / 1e3:9.1f} k/s   ratio {row['ratio']:.3f} (target >= 0.95)   "
            f"compile raw {row['raw_compile_s']:.1f}s envhub {row['envhub_compile_s']:.1f}s   "
            f"episode ends {ends['envhub']}"
        )
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
