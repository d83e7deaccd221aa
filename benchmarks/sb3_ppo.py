"""Wall time of Stable-Baselines3 PPO on envhub's exports against gymnasium's own CartPole (issue 22).

Two parts, each a set of sides trained with ``PPO("MlpPolicy", env, device="cpu", seed=r)`` (default
hyper-parameters) for ``--timesteps``; sides interleave within each repeat, medians over repeats:

1. One env: ``gymnasium.make("CartPole-v1")`` (baseline) vs ``to_gymnasium(envhub.make("gymnax/..."))``
   vs ``to_gymnasium(envhub.make("gymnasium/..."))``.
2. Eight envs: ``DummyVecEnv`` of 8 gymnasium CartPoles (baseline) vs
   ``to_sb3_vec_env(envhub.make("gymnax/CartPole-v1", num_envs=8))``; both under ``VecMonitor``.

Only ``learn`` is timed (envs are built and compiled once, before). Also printed: the mean episode
return of SB3's ``ep_info_buffer`` at the end, and the seconds of the same number of env steps alone
(random actions, no policy), to split the wall time into env stepping and SB3's own work.

Run: ``nice python benchmarks/sb3_ppo.py [--timesteps 50000] [--repeats 3] [--parts 1,2] [--reverse]``
(``--reverse`` times the baseline last in each repeat, to check for an order effect).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

import envhub
from envhub import interop
from envhub.interop.sb3 import to_sb3_vec_env

ENV = "CartPole-v1"


def single_envs() -> dict[str, Any]:
    return {
        "gymnasium": gymnasium.make(ENV),
        "export gymnax": interop.to_gymnasium(envhub.make(f"gymnax/{ENV}")),
        "export gymnasium": interop.to_gymnasium(envhub.make(f"gymnasium/{ENV}")),
    }


def vec_envs(n: int) -> dict[str, Any]:
    return {
        f"DummyVecEnv x{n}": VecMonitor(DummyVecEnv([lambda: gymnasium.make(ENV) for _ in range(n)])),
        f"to_sb3_vec_env x{n}": VecMonitor(to_sb3_vec_env(envhub.make(f"gymnax/{ENV}", num_envs=n))),
    }


def steps_alone(env: Any, steps: int) -> float:
    """Seconds of ``steps`` env transitions with random actions (no policy), resetting single envs at ends."""
    vec = hasattr(env, "num_envs") and hasattr(env, "step_async")
    rng = np.random.default_rng(0)
    if vec:
        env.reset()
        n = env.num_envs
        actions = rng.integers(0, 2, size=(steps // n, n))
        start = time.perf_counter()
        for a in actions:
            env.step(a)
        return time.perf_counter() - start
    env.reset(seed=0)
    actions = rng.integers(0, 2, size=steps)
    start = time.perf_counter()
    for a in actions:
        _, _, terminated, truncated, _ = env.step(int(a))
        if terminated or truncated:
            env.reset()
    return time.perf_counter() - start


def train(env: Any, timesteps: int, seed: int) -> tuple[float, float, int]:
    """Seconds of ``learn``, the final mean episode return, and the timesteps actually run."""
    model = PPO("MlpPolicy", env, device="cpu", seed=seed)
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps)
    seconds = time.perf_counter() - start
    ret = float(np.mean([ep["r"] for ep in model.ep_info_buffer])) if model.ep_info_buffer else float("nan")
    return seconds, ret, model.num_timesteps


def run_part(title: str, make: Callable[[], dict[str, Any]], timesteps: int, repeats: int, reverse: bool) -> None:
    envs = make()
    order = list(reversed(envs)) if reverse else list(envs)
    for env in envs.values():  # compile / warm up outside the timing
        steps_alone(env, 64)
    times: dict[str, list[float]] = {name: [] for name in envs}
    returns: dict[str, list[float]] = {name: [] for name in envs}
    done = 0
    for r in range(repeats):
        for name in order:
            seconds, ret, done = train(envs[name], timesteps, seed=r)
            times[name].append(seconds)
            returns[name].append(ret)
            print(f"  repeat {r + 1}/{repeats} {name}: {seconds:.1f} s, return {ret:.1f}", file=sys.stderr, flush=True)
    alone = {name: statistics.median(steps_alone(env, done) for _ in range(3)) for name, env in envs.items()}
    base = next(iter(envs))
    med = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"\n{title}: {done} timesteps per run, {repeats} interleaved repeats (medians)")
    print(f"{'side':<22} {'learn s':>8} {'/ base':>7} {'env steps alone s':>18} {'mean return':>12}  per-repeat s")
    for name in envs:
        per = ", ".join(f"{t:.1f}" for t in times[name])
        rets = statistics.median(returns[name])
        print(f"{name:<22} {med[name]:>8.1f} {med[name] / med[base]:>7.3f} {alone[name]:>18.2f} {rets:>12.1f}  {per}")
    for name in envs:
        ratios = [t / b for t, b in zip(times[name], times[base])]
        print(f"  {name} / {base} per repeat: " + ", ".join(f"{x:.3f}" for x in ratios))
    for env in envs.values():
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parts", default="1,2", help="comma-separated: 1 (one env), 2 (eight envs)")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--reverse", action="store_true", help="time the baseline last in each repeat")
    parser.add_argument("--torch-threads", type=int, default=1, help="torch.set_num_threads (0: torch's default)")
    args = parser.parse_args()
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    parts = set(args.parts.split(","))
    if "1" in parts:
        run_part("one env", single_envs, args.timesteps, args.repeats, args.reverse)
    if "2" in parts:
        run_part(f"{args.num_envs} envs", lambda: vec_envs(args.num_envs), args.timesteps, args.repeats, args.reverse)


if __name__ == "__main__":
    main()
