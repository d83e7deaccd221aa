"""Parameters as data must not cost: gymnax CartPole-v1 rollouts with per-env params vs make-time constants.

Four jitted ``lax.scan`` rollouts of the same batch, random actions, same-step auto-reset, timed interleaved:

- ``constants``: the params compiled into the program, as envhub did before params were data (a
  ``GymnaxEnvironment`` whose ``default_params`` is ``None``, so the base closes over ``self.params``);
- ``defaults``: envhub's CartPole as it is made (its params live in the state, one copy per env);
- ``per-env``: every env with its own pole length and gravity, passed to ``init``;
- ``per-env, switched``: the same program called with other per-env values (no compile: jit's cache is checked).

Ratios are against ``constants`` (target >= 0.95). Writes ``benchmarks/results/params_rollout.json`` with ``--json``.

    python benchmarks/params_rollout.py [--num-envs 1024] [--steps 500] [--repeats 9] [--json PATH]
"""

from __future__ import annotations

import argparse
from typing import Any

import jax
import jax.numpy as jnp
from _timing import first_call_seconds, interleaved_medians, write_json
from envhub_gymnax.environment import GymnaxEnvironment

import envhub


class ConstantParams(GymnaxEnvironment):
    """CartPole with its params as compile-time constants (no ``default_params``: the pre-params envhub)."""

    @property
    def default_params(self) -> Any:
        return None

    def _reset_one(self, key: jax.Array) -> tuple[Any, Any]:  # type: ignore[override]
        return super()._reset_one(key, self.params)

    def _step_one(self, key: jax.Array, state: Any, action: Any) -> Any:  # type: ignore[override]
        return super()._step_one(key, state, action, self.params)


def rollout(env: envhub.Environment, num_envs: int, steps: int):
    @jax.jit
    def run(key: jax.Array, params: Any) -> tuple[jax.Array, jax.Array]:
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key) if params is None else env.init(init_key, params=params)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            state, ts = env.step(step_key, state, jax.random.randint(action_key, (num_envs,), 0, 2))
            return (state, total + ts.reward.sum(), ends + ts.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    n, steps, key = args.num_envs, args.steps, jax.random.key(0)

    constants = ConstantParams("CartPole-v1", num_envs=n)
    env = envhub.make("gymnax/CartPole-v1", num_envs=n)
    default = env.default_params
    draw = lambda seed: default.replace(  # noqa: E731
        length=jax.random.uniform(jax.random.key(seed), (n,), minval=0.3, maxval=0.7),
        gravity=jax.random.uniform(jax.random.key(seed + 1), (n,), minval=8.0, maxval=11.0),
    )
    per_env, switched = draw(1), draw(3)
    run_constants, run_params = rollout(constants, n, steps), rollout(env, n, steps)
    compiles = {
        "constants": first_call_seconds(lambda: run_constants(key, None)),
        "defaults": first_call_seconds(lambda: run_params(key, None)),
        "per-env": first_call_seconds(lambda: run_params(key, per_env)),
    }
    run_params(key, switched)
    cache = run_params._cache_size()  # defaults (None) and per-env arrays: 2 programs; switching adds none
    runs = {
        "constants": lambda: jax.block_until_ready(run_constants(key, None)),
        "defaults": lambda: jax.block_until_ready(run_params(key, None)),
        "per-env": lambda: jax.block_until_ready(run_params(key, per_env)),
        "per-env, switched": lambda: jax.block_until_ready(run_params(key, switched)),
    }
    medians = interleaved_medians(runs, args.repeats)
    print(f"gymnax/CartPole-v1, {n} envs x {steps} steps, median of {args.repeats} (jax {jax.__version__}, {jax.default_backend()})")
    rows = []
    for name, seconds in medians.items():
        ratio = medians["constants"] / seconds
        rows.append({"run": name, "num_envs": n, "steps": steps, "steps_per_s": round(n * steps / seconds, 1),
                     "ratio_vs_constants": round(ratio, 3), "compile_s": round(compiles.get(name, 0.0), 2)})
        print(f"  {name:<18} {n * steps / seconds / 1e6:7.2f} M steps/s   ratio {ratio:.3f} (target >= 0.95)")
    print(f"  jit cache of the params rollout after 3 params values: {cache} programs (None and per-env arrays)")
    rows.append({"run": "jit cache size", "programs": cache})
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
