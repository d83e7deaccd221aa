"""``envhub.interop.to_torchrl`` vs TorchRL's own env wrappers: rollout frames per second (issue 51).

Each side is a TorchRL env with ``batch_size=[16]`` driven by TorchRL's own ``env.rollout(steps, policy,
break_when_any_done=False)`` (``step_and_maybe_reset``: partial resets where episodes end), the policy writing a
random action drawn from the env's action spec (the same work on every side). Frames = ``num_envs * steps``; sides
interleave within each repeat, medians over repeats; every env is built and warmed up (compiled) before timing.

- CartPole: ``to_torchrl(envhub.make("gymnax/CartPole-v1", num_envs=16))`` and
  ``to_torchrl(envhub.make("gymnasium/CartPole-v1", num_envs=16))`` vs TorchRL's ``GymEnv("CartPole-v1",
  num_envs=16)`` (the target's baseline: TorchRL builds gymnasium's ``AsyncVectorEnv``, 16 worker processes) and
  vs ``GymWrapper`` of gymnasium's in-process ``SyncVectorEnv`` (same-step auto-reset). gymnasium's native NumPy
  vector CartPole (``vectorization_mode="vector_entry_point"``) cannot be wrapped: it auto-resets on the next
  step, and TorchRL 0.14's ``GymWrapper`` refuses that mode.
- brax inverted_pendulum: ``to_torchrl(envhub.make("brax/inverted_pendulum", num_envs=16))`` vs TorchRL's
  ``BraxEnv("inverted_pendulum", batch_size=[16], cache_clear_frequency=False)`` (``--brax``; TorchRL 0.14's wrapper
  runs on brax 0.14.2). By default BraxEnv clears all of JAX's caches every 20 steps (so it compiles its step again,
  and any other JAX program's too): that setting is timed alone, after the interleaved repeats.

    python benchmarks/torchrl_export.py [--steps 2000] [--repeats 5] [--brax] [--brax-steps 500]
        [--json benchmarks/results/torchrl_export.json]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import statistics
import sys
import time
from typing import Any

import torch

import envhub
from envhub.interop import to_torchrl

NUM_ENVS = 16


def random_policy(env: Any) -> Any:
    spec = env.action_spec

    def policy(td: Any) -> Any:
        return td.set("action", spec.rand())

    return policy


def rollout_seconds(env: Any, steps: int) -> float:
    policy = random_policy(env)
    start = time.perf_counter()
    env.rollout(steps, policy, break_when_any_done=False)
    return time.perf_counter() - start


def cartpole_sides() -> dict[str, Any]:
    import gymnasium
    from torchrl.envs import GymEnv, GymWrapper

    same_step = {"autoreset_mode": gymnasium.vector.AutoresetMode.SAME_STEP}  # TorchRL takes SAME_STEP or DISABLED
    sync = gymnasium.make_vec("CartPole-v1", NUM_ENVS, vectorization_mode="sync", vector_kwargs=same_step)
    return {
        "to_torchrl(gymnax/CartPole-v1)": to_torchrl(envhub.make("gymnax/CartPole-v1", num_envs=NUM_ENVS)),
        "to_torchrl(gymnasium/CartPole-v1)": to_torchrl(envhub.make("gymnasium/CartPole-v1", num_envs=NUM_ENVS)),
        "GymEnv('CartPole-v1', num_envs=16)": GymEnv(
            "CartPole-v1", num_envs=NUM_ENVS, categorical_action_encoding=True
        ),
        "GymWrapper(gymnasium SyncVectorEnv x16)": GymWrapper(sync, categorical_action_encoding=True),
    }


def brax_sides() -> dict[str, Any]:
    from torchrl.envs.libs.brax import BraxEnv

    # BraxEnv's default (cache_clear_frequency=None) clears all of JAX's caches every 20 steps, its own compiled
    # step and everyone else's included, so it (and any JAX program beside it) compiles again and again; the
    # baseline is its fastest setting, and the default is timed alone, after (brax_default_alone).
    return {
        "to_torchrl(brax/inverted_pendulum)": to_torchrl(envhub.make("brax/inverted_pendulum", num_envs=NUM_ENVS)),
        "BraxEnv('inverted_pendulum', cache_clear_frequency=False)": BraxEnv(
            "inverted_pendulum", batch_size=[NUM_ENVS], cache_clear_frequency=False
        ),
    }


def brax_default_alone(steps: int) -> float:
    """Frames/s of ``BraxEnv("inverted_pendulum", batch_size=[16])`` as made by default (one run, after a warm-up)."""
    from torchrl.envs.libs.brax import BraxEnv

    env = BraxEnv("inverted_pendulum", batch_size=[NUM_ENVS])
    rollout_seconds(env, 50)
    return NUM_ENVS * steps / rollout_seconds(env, steps)


def measure(sides: dict[str, Any], steps: int, repeats: int) -> dict[str, float]:
    for env in sides.values():  # build, compile, warm up
        env.set_seed(0)
        rollout_seconds(env, 50)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for i in range(repeats):
        for name, env in sides.items():
            times[name].append(rollout_seconds(env, steps))
        print(f"\rrepeat {i + 1}/{repeats}", end="" if i + 1 < repeats else "\n", file=sys.stderr, flush=True)
    return {name: NUM_ENVS * steps / statistics.median(ts) for name, ts in times.items()}


def report(group: str, rates: dict[str, float], baseline: str, target: float) -> dict[str, Any]:
    ours = {name: rate for name, rate in rates.items() if name.startswith("to_torchrl")}
    print(f"{group}: frames/s, {NUM_ENVS} envs")
    for name, rate in rates.items():
        print(f"  {name:<46} {rate / 1e3:8.2f} k/s")
    ratios = {name: round(rate / rates[baseline], 3) for name, rate in ours.items()}
    for name, ratio in ratios.items():
        print(f"  ratio {name} / {baseline}: {ratio} (target >= {target})")
    return {
        "group": group,
        "num_envs": NUM_ENVS,
        "frames_per_s": {name: round(rate, 1) for name, rate in rates.items()},
        "baseline": baseline,
        "ratios_vs_baseline": ratios,
        "ratios_vs_every_side": {
            name: {other: round(rate / r, 3) for other, r in rates.items() if other != name}
            for name, rate in ours.items()
        },
        "target": target,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="rollout steps per timed run (frames: 16x)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--brax", action="store_true", help="also brax inverted_pendulum vs TorchRL's BraxEnv")
    parser.add_argument("--brax-steps", type=int, default=500, help="rollout steps per timed run of brax")
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    torch.set_num_threads(1)
    versions = {p: importlib.metadata.version(p) for p in ("torch", "torchrl", "tensordict", "jax", "gymnasium")}
    print(f"to_torchrl vs TorchRL's wrappers: env.rollout({args.steps}), random actions, {versions}")
    rows = [report("CartPole-v1", measure(cartpole_sides(), args.steps, args.repeats),
                   "GymEnv('CartPole-v1', num_envs=16)", 1.0)]  # fmt: skip
    if args.brax:
        versions["brax"] = importlib.metadata.version("brax")
        rates = measure(brax_sides(), args.brax_steps, args.repeats)
        baseline = "BraxEnv('inverted_pendulum', cache_clear_frequency=False)"
        rows.append(report("brax inverted_pendulum", rates, baseline, 2.0))
        default = brax_default_alone(args.brax_steps)
        ours = rates["to_torchrl(brax/inverted_pendulum)"]
        print(
            f"  BraxEnv('inverted_pendulum') as made by default, alone: {default / 1e3:.3f} k/s (ours / it: {ours / default:.1f})"
        )
        rows[-1]["default_braxenv_alone_frames_per_s"] = round(default, 1)
        rows[-1]["ratio_vs_default_braxenv_alone"] = round(ours / default, 3)
    if args.json:
        result = {"versions": versions, "machine": f"{platform.machine()}, {torch.get_num_threads()} torch thread",
                  "steps": args.steps, "repeats": args.repeats, "rows": rows}  # fmt: skip
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
