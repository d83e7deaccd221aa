"""envhub's MuJoCo Playground backend vs playground's own training loop: jitted lax.scan, batched.

The raw loop is playground's ``wrapper.wrap_for_brax_training(env, episode_length)`` (brax's
VmapWrapper and EpisodeWrapper, playground's BraxAutoResetWrapper, which by default restarts every
episode from a cached first state; ``full_reset=True`` runs a real reset on every step instead).
envhub runs with real resets (a fresh initial state per episode, from spares made num_envs at a
time, see envhub.native.resets) and with ``reset_mode="cached"`` (playground's default scheme). Every loop
does the same work per step: split the key, sample uniform actions in [-1, 1], step the batch,
accumulate reward and episode ends. Both use MJX's ``impl="jax"`` (the one that runs on a CPU).
Compile time is lower + compile of the whole jitted rollout (init and scan).

    python benchmarks/playground_envs.py [--env CartpoleBalance] [--num-envs 64,256]
        [--episode-length 50] [--steps 100] [--repeats 5] [--full-reset] [--no-spares] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import sys

import jax
from _timing import comparison_row, time_rollouts, write_json

import envhub


def raw_playground_rollout(name: str, num_envs: int, steps: int, episode_length: int, full_reset: bool):
    with contextlib.redirect_stdout(sys.stderr):  # mujoco prints optional-import notices on stdout
        from mujoco_playground import registry, wrapper

    env = registry.load(name, config_overrides={"impl": "jax", "episode_length": episode_length})
    env = wrapper.wrap_for_brax_training(env, episode_length=episode_length, full_reset=full_reset)

    def run(key):
        init_key, key = jax.random.split(key)
        state = env.reset(
            jax.random.key_data(jax.random.split(init_key, num_envs))
        )  # raw keys: playground's wrappers read key.shape[:-1]

        def body(carry, key):
            state, total, ends = carry
            action_key, _ = jax.random.split(key)
            actions = jax.random.uniform(action_key, (num_envs, env.action_size), minval=-1.0, maxval=1.0)
            state = env.step(state, actions)
            return (state, total + state.reward.sum(), ends + state.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0.0), jax.random.split(key, steps))
        return total, ends

    return run


def envhub_rollout(name: str, num_envs: int, steps: int, episode_length: int, reset_mode: str, **kwargs):
    env = envhub.make(
        f"playground/{name}",
        num_envs=num_envs,
        max_episode_steps=episode_length,
        reset_mode=reset_mode,
        impl="jax",
        **kwargs,
    )
    size = env.single_action_space.shape[0]

    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            actions = jax.random.uniform(action_key, (num_envs, size), minval=-1.0, maxval=1.0)
            state, ts = env.step(step_key, state, actions)
            return (state, total + ts.reward.sum(), ends + ts.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0.0), jax.random.split(key, steps))
        return total, ends

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="CartpoleBalance")
    parser.add_argument("--num-envs", default="64,256", help="comma-separated batch sizes")
    parser.add_argument("--episode-length", type=int, default=50, help="the time limit (episodes end often)")
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--full-reset", action="store_true", help="also time playground's full_reset=True loop")
    parser.add_argument("--no-spares", action="store_true", help="also time envhub real with reset_spares=False")
    parser.add_argument("--json", default=None, metavar="PATH", help="write comparison rows (raw = playground's loop)")
    args = parser.parse_args()

    key = jax.random.key(0)
    rows = []
    print(
        f"{args.env}, episode_length={args.episode_length}, {args.steps} scan steps, median of {args.repeats} "
        f"interleaved repeats (jax {jax.__version__}, {jax.devices()[0].platform})"
    )
    for num_envs in [int(n) for n in args.num_envs.split(",")]:
        length = args.episode_length
        runs = {
            "playground (raw)": raw_playground_rollout(args.env, num_envs, args.steps, length, False),
            "envhub real": envhub_rollout(args.env, num_envs, args.steps, length, "real"),
            "envhub cached": envhub_rollout(args.env, num_envs, args.steps, length, "cached"),
        }
        if args.no_spares:
            runs["envhub real, no spares"] = envhub_rollout(
                args.env, num_envs, args.steps, length, "real", reset_spares=False
            )
        if args.full_reset:
            runs["playground full_reset"] = raw_playground_rollout(args.env, num_envs, args.steps, length, True)
        medians, compiles, ends = time_rollouts(runs, key, args.repeats)
        raw = medians["playground (raw)"]
        print(f"  num_envs={num_envs}")
        for label, seconds in medians.items():
            print(
                f"    {label:<22} {seconds * 1e3:9.1f} ms  {num_envs * args.steps / seconds:10.0f} steps/s  "
                f"x{raw / seconds:5.2f}  compile {compiles[label]:6.1f} s  episode ends {ends[label]}"
            )
        others = [label for label in medians if label != "playground (raw)"]
        rows += [
            comparison_row("playground", args.env, num_envs, args.steps, medians, compiles, label, "playground (raw)")
            for label in others
        ]
        sys.stdout.flush()
    print("target: envhub real and envhub cached >= 0.95x playground (raw)")
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
