"""envhub's jumanji backend vs jumanji called directly: jitted lax.scan of a batch, ratios in one run.

Both loops do the same work per step: split the key, sample random actions from the action spec's
range, step every environment with auto-reset and accumulate reward and episode ends. The raw loop
is jumanji's own batched auto-reset, ``jumanji.wrappers.VmapAutoResetWrapper``; envhub's is
``envhub.make("jumanji/<env>", num_envs=N)`` (same-step auto-reset, spare initial states).

    python benchmarks/jumanji_envs.py [--env Snake-v1] [--num-envs 64,1024] [--steps 500] [--repeats 7] [--json out.json]
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import jumanji
from _timing import comparison_row, first_call_seconds, interleaved_medians, write_json
from jumanji.types import StepType
from jumanji.wrappers import VmapAutoResetWrapper

import envhub


def _random_actions(space: envhub.spaces.Space, key: jax.Array, num_envs: int) -> jax.Array:
    return space.sample(key, (num_envs,))  # one env's action space, drawn for the batch


def raw_jumanji_rollout(name: str, num_envs: int, steps: int, space: envhub.spaces.Space):
    env = VmapAutoResetWrapper(jumanji.make(name))

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = env.reset(jax.random.split(init_key, num_envs))

        def body(carry, key):
            state, total, ends = carry
            state, timestep = env.step(state, _random_actions(space, key, num_envs))
            ends = ends + (timestep.step_type == StepType.LAST).sum()
            return (state, total + timestep.reward.sum(), ends), None

        (_, total, ends), _ = jax.lax.scan(body, (state, jnp.float32(0), 0), jax.random.split(key, steps))
        return total, ends

    return run


def envhub_rollout(name: str, num_envs: int, steps: int, space: envhub.spaces.Space):
    env = envhub.make(f"jumanji/{name}", num_envs=num_envs)

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key)

        def body(carry, key):
            state, total, ends = carry
            state, ts = env.step(key, state, _random_actions(space, key, num_envs))
            return (state, total + ts.reward.sum(), ends + ts.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, jnp.float32(0), 0), jax.random.split(key, steps))
        return total, ends

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="Snake-v1")
    parser.add_argument("--num-envs", default="64,1024", help="comma-separated batch sizes")
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    args = parser.parse_args()

    key = jax.random.key(0)
    space = envhub.make(f"jumanji/{args.env}").action_space
    rows = []
    print(
        f"jumanji {args.env}, {args.steps} scan steps, median of {args.repeats} interleaved repeats "
        f"(jax {jax.__version__}, {jax.devices()[0].platform})"
    )
    for num_envs in [int(n) for n in args.num_envs.split(",")]:
        runs = {
            "jumanji (raw)": raw_jumanji_rollout(args.env, num_envs, args.steps, space),
            "envhub": envhub_rollout(args.env, num_envs, args.steps, space),
        }
        compiles = {name: first_call_seconds(lambda r=run: r(key)) for name, run in runs.items()}
        ends = {name: int(run(key)[1]) for name, run in runs.items()}
        medians = interleaved_medians(
            {n: (lambda r=r: jax.block_until_ready(r(key))) for n, r in runs.items()}, args.repeats
        )
        row = comparison_row("jumanji", args.env, num_envs, args.steps, medians, compiles, "envhub", "jumanji (raw)")
        rows.append({**row, "episode_ends": ends})
        print(
            f"  num_envs={num_envs:<6} raw {row['raw_steps_per_s'] / 1e6:7.3f} M/s   envhub {row['envhub_steps_per_s'] / 1e6:7.3f} M/s"
            f"   ratio {row['ratio']:.3f} (target >= 0.95)   compile raw {row['raw_compile_s']:.2f}s envhub {row['envhub_compile_s']:.2f}s"
            f"   episode ends raw {ends['jumanji (raw)']} envhub {ends['envhub']}"
        )
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
