"""rejax 0.1.3 PPO on ``to_gymnax(envhub.make("gymnax/CartPole-v1"), step_returns=5)`` vs on gymnax's own CartPole.

rejax 0.1.3 unpacks a five-value step; gymnax 1.0.1's returns six, so the raw side is gymnax's CartPole given
the five-value step by a three-line subclass (``FiveValueCartPole``). Both sides train with the same config
(``CONFIG``) on seeds 0 and 1, interleaved (envhub first on even repeats, raw first on odd ones). Each side's
``train`` is compiled once, before timing; speed is ``total_timesteps`` over the seconds of the compiled call
(rejax's evaluations, at ``eval_freq``, included on both sides). The final return is rejax's evaluation at
the end (mean over its 128 episodes), averaged over the seeds. Targets: return >= 0.8x, speed >= 0.95x.

    python benchmarks/rejax_cartpole.py [--timesteps 200000] [--repeats 1] [--json benchmarks/results/rejax_cartpole.json]
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import numpy as np
from _timing import write_json
from gymnax.environments.classic_control.cartpole import CartPole
from rejax import PPO

import envhub
from envhub.interop import to_gymnax

CONFIG = {
    "num_envs": 16,
    "num_steps": 128,
    "num_epochs": 4,
    "num_minibatches": 8,
    "learning_rate": 2.5e-3,
    "max_grad_norm": 10.0,
    "gamma": 0.99,
    "gae_lambda": 0.95,
    "clip_eps": 0.2,
    "ent_coef": 0.0,
    "vf_coef": 0.5,
    "normalize_observations": True,
    "skip_initial_evaluation": True,
    "agent_kwargs": {"hidden_layer_sizes": (64, 64), "activation": "tanh"},
}


class FiveValueCartPole(CartPole):
    def step(self, key, state, action, params=None):
        obs, state, reward, terminated, truncated, info = super().step(key, state, action, params)
        return obs, state, reward, terminated | truncated, info


def sides() -> dict[str, tuple[object, object]]:
    raw = FiveValueCartPole()
    return {
        "envhub": to_gymnax(envhub.make("gymnax/CartPole-v1"), step_returns=5),
        "gymnax (raw)": (raw, raw.default_params),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timesteps", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=1, help="timed calls per seed and side")
    parser.add_argument("--json", default=None, metavar="PATH", help="write the results as JSON")
    args = parser.parse_args()
    seeds = [0, 1]
    config = {**CONFIG, "total_timesteps": args.timesteps, "eval_freq": args.timesteps // 4}

    compiled, compile_s = {}, {}
    for name, (env, params) in sides().items():
        algo = PPO.create(env=env, env_params=params, **config)
        start = time.perf_counter()
        compiled[name] = jax.jit(algo.train).lower(jax.random.key(0)).compile()
        compile_s[name] = time.perf_counter() - start

    seconds = {name: [] for name in compiled}
    returns = {name: {} for name in compiled}
    for i in range(args.repeats * len(seeds)):
        seed = seeds[i % len(seeds)]
        order = list(compiled) if i % 2 == 0 else list(compiled)[::-1]
        for name in order:
            start = time.perf_counter()
            state, (_, curve) = jax.block_until_ready(compiled[name](jax.random.key(seed)))
            seconds[name].append(time.perf_counter() - start)
            returns[name][seed] = [round(float(r), 1) for r in np.asarray(curve).mean(axis=-1)]

    rows = []
    for name in compiled:
        speed = args.timesteps / statistics.median(seconds[name])
        final = statistics.fmean(curve[-1] for curve in returns[name].values())
        rows.append(
            {
                "side": name,
                "timesteps": args.timesteps,
                "steps_per_s": round(speed, 1),
                "final_return": round(final, 1),
                "returns_by_seed": returns[name],
                "compile_s": round(compile_s[name], 2),
            }
        )
    ours, raw = rows
    ratios = {
        "return_ratio": round(ours["final_return"] / raw["final_return"], 3),
        "speed_ratio": round(ours["steps_per_s"] / raw["steps_per_s"], 3),
    }
    print(
        f"rejax PPO, CartPole-v1, {args.timesteps} steps, seeds {seeds} (jax {jax.__version__}, {jax.devices()[0].platform})"
    )
    for row in rows:
        print(
            f"  {row['side']:<13} final return {row['final_return']:6.1f}   {row['steps_per_s'] / 1e3:8.1f} k steps/s"
            f"   compile {row['compile_s']:.1f}s   returns by seed {row['returns_by_seed']}"
        )
    print(
        f"  envhub / raw: return {ratios['return_ratio']:.3f} (target >= 0.8)   speed {ratios['speed_ratio']:.3f} (target >= 0.95)"
    )
    write_json([*rows, ratios], args.json)


if __name__ == "__main__":
    main()
