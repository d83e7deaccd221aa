"""PPO training throughput: examples/ppo.py on envhub's gymnax/CartPole-v1 vs the same PPO on gymnax directly.

Both sides run the same PPO program (``examples/ppo.py``'s ``build``: rollout and update in one
jitted ``lax.scan``); only the environment layer differs. The raw side calls gymnax's own
``reset_env``/``step_env`` under ``vmap`` and auto-resets by hand (reset every step, select where
done), as a gymnax user would; envhub's side is ``envhub.make("gymnax/CartPole-v1", num_envs=N)``,
and, for reference, the same with ``validate_actions=False`` (no action value check) and a second copy
of the raw side (A/A: the run's own noise).

    python benchmarks/ppo.py [--num-envs 8,32] [--updates 20] [--repeats 9] [--json out.json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, NamedTuple

import gymnax
import jax
import jax.numpy as jnp
from _timing import comparison_row, first_call_seconds, interleaved_medians, write_json

import envhub
from envhub import spaces

AA = "gymnax (raw, a second copy: A/A noise)"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import ppo  # noqa: E402


class RawStep(NamedTuple):
    """The TimeStep fields PPO reads, built from gymnax's own outputs."""

    obs: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    final_obs: jax.Array


def gymnax_layer(num_envs: int) -> ppo.EnvLayer:
    env, params = gymnax.make("CartPole-v1")

    def init(key: jax.Array) -> tuple[Any, RawStep]:
        obs, state = jax.vmap(env.reset_env, in_axes=(0, None))(jax.random.split(key, num_envs), params)
        no = jnp.zeros(num_envs, bool)
        return state, RawStep(obs, jnp.zeros(num_envs), no, no, obs)

    def step_one(key: jax.Array, state: Any, action: jax.Array) -> tuple[Any, RawStep]:
        step_key, reset_key = jax.random.split(key)
        obs, reached, reward, terminated, _ = env.step_env(step_key, state, action, params)
        truncated = env.is_truncated(reached, params) & ~terminated
        done = terminated | truncated
        reset_obs, reset_state = env.reset_env(reset_key, params)
        state = jax.tree.map(lambda new, old: jnp.where(done, new, old), reset_state, reached)
        return state, RawStep(jnp.where(done, reset_obs, obs), reward, terminated, truncated, obs)

    def step(key: jax.Array, state: Any, action: jax.Array) -> tuple[Any, RawStep]:
        return jax.vmap(step_one)(jax.random.split(key, num_envs), state, action)

    return ppo.EnvLayer(init, step, spaces.Discrete(2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", default="8,32", help="comma-separated batch sizes")
    parser.add_argument("--updates", type=int, default=20, help="PPO updates per timed call")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    args = parser.parse_args()

    rows = []
    print(
        f"PPO on CartPole-v1 (examples/ppo.py defaults otherwise), {args.updates} updates per call, "
        f"median of {args.repeats} interleaved repeats (jax {jax.__version__}, {jax.devices()[0].platform})"
    )
    for num_envs in [int(n) for n in args.num_envs.split(",")]:
        cfg = ppo.Config(num_envs=num_envs)
        env = envhub.make("gymnax/CartPole-v1", num_envs=num_envs)
        unchecked = envhub.make("gymnax/CartPole-v1", num_envs=num_envs, validate_actions=False)
        layers = {"gymnax (raw)": gymnax_layer(num_envs), "envhub": ppo.envhub_layer(env)}
        layers |= {"envhub (validate_actions=False)": ppo.envhub_layer(unchecked), AA: gymnax_layer(num_envs)}
        runs, carries = {}, {}
        for name, layer in layers.items():
            start, chunk, _ = ppo.build(layer, cfg, obs_size=4)
            carries[name] = jax.jit(start)(jax.random.key(0))
            runs[name] = jax.jit(chunk, static_argnums=1)
        calls = {n: (lambda r=r, c=carries[n]: jax.block_until_ready(r(c, args.updates))) for n, r in runs.items()}
        compiles = {name: first_call_seconds(call) for name, call in calls.items()}
        medians = interleaved_medians(calls, args.repeats)
        steps = args.updates * cfg.num_steps  # per env; comparison_row multiplies by num_envs
        row = comparison_row("gymnax", "CartPole-v1 PPO", num_envs, steps, medians, compiles, "envhub", "gymnax (raw)")
        returns = {n: _mean_return(run(carries[n], args.updates)[1]) for n, run in runs.items()}
        extra = {k: round(medians["gymnax (raw)"] / medians[k], 3) for k in ("envhub (validate_actions=False)", AA)}
        rows.append({**row, "mean_return": returns, "ratios_to_raw": extra})
        print(
            f"  num_envs={num_envs:<4} raw {row['raw_steps_per_s']:>10,.0f} steps/s   envhub {row['envhub_steps_per_s']:>10,.0f}"
            f" steps/s   ratio {row['ratio']:.3f} (target >= 0.95)   compile raw {row['raw_compile_s']:.1f}s"
            f" envhub {row['envhub_compile_s']:.1f}s   validate_actions=False {extra['envhub (validate_actions=False)']:.3f}"
            f"   A/A noise {extra[AA]:.3f}   envhub / raw copy {medians[AA] / medians['envhub']:.3f}"
            f"   mean return raw {returns['gymnax (raw)']:.1f} envhub {returns['envhub']:.1f}"
        )
        env.close()
        unchecked.close()
    write_json(rows, args.json)


def _mean_return(stats: dict[str, jax.Array]) -> float:
    return float(stats["return_sum"].sum() / max(1, int(stats["episodes"].sum())))


if __name__ == "__main__":
    main()
