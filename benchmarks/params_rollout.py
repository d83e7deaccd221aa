"""Parameters as data must not cost: rollouts with params in the state vs the same params as compile-time constants.

For each env id (default gymnax CartPole-v1 and brax inverted_pendulum), four jitted ``lax.scan`` rollouts of
the same batch, random actions, same-step auto-reset, timed interleaved:

- ``constants``: the default params compiled into the program, as envhub did before params were data
  (``with_constants``: the env with ``default_params`` ``None``, its functions closing over the defaults);
- ``defaults``: the env as ``envhub.make`` gives it (its params live in the state, one copy per env);
- ``per-env``: one set of params per env (leaves leading with ``num_envs``) holding the default values: the same
  dynamics and work as ``constants``, so the ratio is the whole cost of params as data (target >= 0.95);
- ``per-env, drawn``: every env with its own params (float leaves scaled per env by a draw in [0.8, 1.2]): other
  dynamics, so other episode lengths and reset work (the episode ends are printed beside the ratio);
- ``per-env, switched``: the same program with another draw (no compile: jit's cache is counted).

Ratios are against ``constants``. ``--json`` writes the rows.

    python benchmarks/params_rollout.py [--envs gymnax/CartPole-v1,brax/inverted_pendulum] [--num-envs 1024,64]
        [--steps 500,100] [--repeats 9] [--json PATH]
"""

from __future__ import annotations

import argparse
from typing import Any

import jax
import jax.numpy as jnp
from _timing import first_call_seconds, interleaved_medians, write_json

import envhub


def with_constants(env: envhub.Environment) -> envhub.Environment:
    """``env`` with its default params compiled into the program (``default_params`` ``None``: the pre-params envhub)."""
    cls, fixed = type(env), env.default_params

    class Constants(cls):  # type: ignore[misc,valid-type]
        default_params = property(lambda self: None)  # type: ignore[assignment]

        def _reset_one(self, key: jax.Array) -> Any:  # type: ignore[override]
            return cls._reset_one(self, key, fixed)

        def _step_one(self, key: jax.Array, state: Any, action: Any) -> Any:  # type: ignore[override]
            return cls._step_one(self, key, state, action, fixed)

    env.__class__ = Constants
    return env


def rollout(env: envhub.Environment, steps: int):
    @jax.jit
    def run(key: jax.Array, params: Any) -> tuple[jax.Array, jax.Array]:
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key) if params is None else env.init(init_key, params=params)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            state, ts = env.step(step_key, state, env.action_space.sample(action_key))
            return (state, total + ts.reward.sum(), ends + ts.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def draw(default: Any, n: int, seed: int) -> Any:
    """Per-env params: every float leaf of ``default`` times a factor in [0.8, 1.2] drawn per env and entry."""
    leaves, treedef = jax.tree.flatten(default)
    keys = jax.random.split(jax.random.key(seed), len(leaves))
    out = []
    for k, x in zip(keys, leaves):
        x = jnp.asarray(x)
        if jnp.issubdtype(x.dtype, jnp.floating):
            x = x * jax.random.uniform(k, (n, *x.shape), minval=0.8, maxval=1.2, dtype=x.dtype)
        else:
            x = jnp.full((n, *x.shape), x, x.dtype)  # strong-typed, as the drawn floats: one program for all
        out.append(x)
    return jax.tree.unflatten(treedef, out)


def compare(env_id: str, n: int, steps: int, repeats: int) -> list[dict[str, Any]]:
    key = jax.random.key(0)
    constants = with_constants(envhub.make(env_id, num_envs=n))
    env = envhub.make(env_id, num_envs=n)
    same = jax.tree.map(lambda x: jnp.full((n, *jnp.shape(x)), x, jnp.asarray(x).dtype), env.default_params)
    drawn, switched = draw(env.default_params, n, 1), draw(env.default_params, n, 2)
    run_constants, run_params = rollout(constants, steps), rollout(env, steps)
    compiles = {
        "constants": first_call_seconds(lambda: run_constants(key, None)),
        "defaults": first_call_seconds(lambda: run_params(key, None)),
        "per-env": first_call_seconds(lambda: run_params(key, same)),
    }
    inputs = {
        "constants": None,
        "defaults": None,
        "per-env": same,
        "per-env, drawn": drawn,
        "per-env, switched": switched,
    }
    ends = {
        name: int(run_params(key, p)[1] if name != "constants" else run_constants(key, None)[1])
        for name, p in inputs.items()
    }
    cache = run_params._cache_size()  # defaults (None) and per-env arrays: 2 programs; switching adds none
    runs = {
        name: (lambda p=p: jax.block_until_ready(run_params(key, p)))
        if name != "constants"
        else (lambda: jax.block_until_ready(run_constants(key, None)))
        for name, p in inputs.items()
    }
    medians = interleaved_medians(runs, repeats)
    print(f"{env_id}, {n} envs x {steps} steps, median of {repeats} (jax {jax.__version__}, {jax.default_backend()})")
    rows = []
    for name, seconds in medians.items():
        ratio = medians["constants"] / seconds
        rows.append(
            {
                "env": env_id,
                "run": name,
                "num_envs": n,
                "steps": steps,
                "steps_per_s": round(n * steps / seconds, 1),
                "ratio_vs_constants": round(ratio, 3),
                "episode_ends": ends[name],
                "compile_s": round(compiles.get(name, 0.0), 2),
            }
        )
        print(
            f"  {name:<18} {n * steps / seconds / 1e3:9.1f} k steps/s   ratio {ratio:.3f}   episode ends {ends[name]}"
        )
    print(f"  jit cache after 3 params values: {cache} programs (None, and per-env arrays: switching adds none)")
    rows.append({"env": env_id, "run": "jit cache size", "programs": cache})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="gymnax/CartPole-v1,brax/inverted_pendulum")
    parser.add_argument("--num-envs", default="1024,64", help="one per env")
    parser.add_argument("--steps", default="500,100", help="one per env")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    rows = []
    for env_id, n, steps in zip(args.envs.split(","), args.num_envs.split(","), args.steps.split(",")):
        rows += compare(env_id, int(n), int(steps), args.repeats)
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
