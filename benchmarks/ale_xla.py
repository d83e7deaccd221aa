"""envhub-ale against ALE's own vector env (ale-py 0.12's ``AtariVectorEnv``, C++ threads) through its XLA
interface, and envhub's envpool Atari beside them (issue 36's target: envhub-ale >= 0.95x ALE's xla() scan).

- ``ale xla scan`` (the raw baseline): ``AtariVectorEnv.xla()``'s step in a jitted ``lax.scan`` with random
  actions. ALE's next-step reset: the step after an episode ends resets that env instead of stepping it.
- ``envhub ale``: ``envhub.make("ale/<Game>-v5", num_envs=N)`` (the preset's settings as kwargs) in a jitted
  scan: ALE's step, then, only where an episode ended, ALE's partial reset of those envs in the same step
  (``envhub_ale.xla``), the stale-state guard, and the true final frame kept.
- ``python loop``: ``AtariVectorEnv.step`` with NumPy random actions (next-step reset).
- ``envhub envpool``: ``envhub.make("envpool/<Game>-v5", num_envs=N)`` in a jitted scan (dqn preset only:
  envpool's defaults are the same preprocessing).

Presets: ``dqn``, AtariVectorEnv's defaults (84x84 grayscale, 4 stacked, up to 30 noops and fire at reset,
rewards clipped, no sticky actions); ``v5``, what gymnasium's ``ALE/<Game>-v5`` means (210x160 RGB, no
stacking, sticky actions 0.25, no noops, no fire reset, no clipping): envhub-ale's default. Episodes are also
cut at 400 frames (ALE's ``max_num_frames_per_episode``; envhub-ale's same kwarg, 100 steps) so that the reset
path runs; 108000 is ALE's default.

Run: ``python benchmarks/ale_xla.py [--game pong] [--num-envs 16] [--steps 200] [--repeats 7] [--json PATH]``.
Loops of one configuration run interleaved in one process; medians and ratios are printed.
"""

from __future__ import annotations

import argparse
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from _timing import interleaved_medians, write_json

warnings.filterwarnings("ignore", module="gymnasium")

PRESETS = {
    "dqn": {},
    "v5": dict(
        img_height=210,
        img_width=160,
        grayscale=False,
        stack_num=1,
        maxpool=False,
        noop_max=0,
        use_fire_reset=False,
        reward_clipping=False,
        repeat_action_probability=0.25,
    ),  # fmt: skip
}
# envhub-ale's defaults are v5's; the dqn preset as its kwargs (AtariVectorEnv's own defaults).
ENVHUB_DQN = dict(
    img_height=84, img_width=84, grayscale=True, stack_num=4, maxpool=True, noop_max=30, use_fire_reset=True,
    reward_clipping=True, repeat_action_probability=0.0,
)  # fmt: skip


def make_ale(game: str, n: int, preset: str, max_frames: int):
    from ale_py.vector_env import AtariVectorEnv

    env = AtariVectorEnv(game, num_envs=n, max_num_frames_per_episode=max_frames, **PRESETS[preset])
    handle, reset, step = env.xla()
    handle, _ = reset(handle, seed=np.arange(n))
    return env, handle, step


def scan_loop(step, carry, n: int, steps: int, num_actions: int):
    """A callable running ``steps`` of ``step(key, carry, actions) -> (carry, reward, ends)`` in one jitted scan
    with random actions, the carry kept between calls (ALE's handle cannot be replayed); returns the ends."""

    @jax.jit
    def rollout(carry, key):
        def body(carry, key):
            carry, reward, ends = step(key, carry, jax.random.randint(key, (n,), 0, num_actions, jnp.int32))
            return carry, (reward.sum(), ends)

        carry, (rewards, ends) = jax.lax.scan(body, carry, jax.random.split(key, steps))
        return carry, rewards.sum(), ends.sum()

    box, ends = [carry], [0]

    def run():
        box[0], total, ended = rollout(box[0], jax.random.key(1))
        ends[0] += int(ended)
        return jax.block_until_ready(total)

    return run, ends


def ale_xla_scan(game, n, steps, preset, max_frames, num_actions):
    env, handle, xla_step = make_ale(game, n, preset, max_frames)

    def step(key, handle, action):
        handle, (_, reward, terminated, truncated, _) = xla_step(handle, action)
        return handle, reward, (terminated | truncated).sum()

    return *scan_loop(step, handle, n, steps, num_actions), env.close


def envhub_ale(game, n, steps, preset, max_frames, num_actions):
    from ale_py.registration import rom_id_to_name

    import envhub

    settings = {**(ENVHUB_DQN if preset == "dqn" else {}), "max_num_frames_per_episode": max_frames}
    env = envhub.make(f"ale/{rom_id_to_name(game)}-v5", num_envs=n, **settings)

    def step(key, state, action):
        state, ts = env.step(key, state, action)
        return state, ts.reward, ts.done.sum()

    return *scan_loop(step, env.init(jax.random.key(0))[0], n, steps, num_actions), env.close


def python_loop(game, n, steps, preset, max_frames, num_actions):
    from ale_py.vector_env import AtariVectorEnv

    env, rng = (
        AtariVectorEnv(game, num_envs=n, max_num_frames_per_episode=max_frames, **PRESETS[preset]),
        np.random.default_rng(0),
    )
    env.reset(seed=0)
    ends = [0]

    def run():
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(rng.integers(0, num_actions, n, dtype=np.int32))
            ends[0] += int(np.sum(terminated | truncated))

    return run, ends, env.close


def envhub_envpool(game, n, steps, preset, max_frames, num_actions):
    import envhub

    task = "".join(part.capitalize() for part in game.split("_")) + "-v5"
    env = envhub.make(f"envpool/{task}", num_envs=n, max_episode_steps=max_frames // 4)

    def step(key, state, action):
        state, ts = env.step(key, state, action)
        return state, ts.reward, ts.done.sum()

    return *scan_loop(step, env.init(jax.random.key(0))[0], n, steps, num_actions), env.close


LOOPS = {
    "ale xla scan": ale_xla_scan,
    "envhub ale": envhub_ale,
    "python loop": python_loop,
    "envhub envpool": envhub_envpool,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="pong")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=200, help="steps per timed repeat")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    import ale_py
    from ale_py.vector_env import AtariVectorEnv

    probe = AtariVectorEnv(args.game, num_envs=1)
    num_actions = int(probe.single_action_space.n)
    probe.close()
    print(f"ale-py {ale_py.__version__}, jax {jax.__version__}, {args.game}, {args.num_envs} envs, "
          f"{args.steps} steps a repeat, medians of {args.repeats} interleaved repeats")  # fmt: skip
    rows = []
    for preset, max_frames in (("dqn", 108000), ("dqn", 400), ("v5", 108000), ("v5", 400)):
        loops = [name for name in LOOPS if not (name == "envhub envpool" and preset != "dqn")]
        made = {
            name: LOOPS[name](args.game, args.num_envs, args.steps, preset, max_frames, num_actions) for name in loops
        }
        for run, _, _ in made.values():
            run()  # compile, and fill the pools' threads
        for _, ends, _ in made.values():
            ends[0] = 0
        medians = interleaved_medians({name: run for name, (run, _, _) in made.items()}, args.repeats)
        base = medians["ale xla scan"]
        print(f"\npreset {preset}, max_num_frames_per_episode {max_frames}")
        for name, seconds in medians.items():
            rate = args.num_envs * args.steps / seconds
            ends = made[name][1][0]
            print(
                f"  {name:<20} {rate / 1e3:9.1f} k steps/s  {base / seconds:6.3f}x ale xla scan  ({ends} episode ends)"
            )
            rows.append({"game": args.game, "num_envs": args.num_envs, "preset": preset, "max_frames": max_frames,
                         "loop": name, "steps_per_s": round(rate, 1), "vs_ale_xla": round(base / seconds, 3),
                         "episode_ends": ends})  # fmt: skip
        for _, _, close in made.values():
            close()
    if args.json:
        write_json(rows, args.json)


if __name__ == "__main__":
    main()
