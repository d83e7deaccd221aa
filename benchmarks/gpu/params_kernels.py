"""Why per-env params cost on a GPU at mid-size batches: time and count the kernels of a rollout's loop body.

gymnax CartPole-v1, N envs, a jitted ``lax.scan`` (benchmarks/params_rollout.py's rollout), four variants:
``constants`` (params compiled in), ``per-env`` (per-env arrays as program inputs, envhub's default layout),
``per-env, next only`` (the step reads ``state.next_params`` without the per-env select of ``JaxState.params``:
a diagnostic, wrong after ``set_params``), ``per-env, baked`` (the same per-env arrays closed over: constants of
the program); and gymnax's own vmapped step with shared and with per-env params (``raw, ...``: what any
implementation pays for per-env params). Prints medians, ratios and, from the optimized HLO, the instructions of the scan's loop body by kind.

    python benchmarks/gpu/params_kernels.py [--num-envs 16384] [--steps 500] [--repeats 9]
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

import gymnax
import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _timing import interleaved_medians  # noqa: E402
from params_rollout import rollout, with_constants  # noqa: E402

import envhub  # noqa: E402
from envhub.native.state import JaxState  # noqa: E402


def loop_body_ops(hlo: str) -> collections.Counter:
    """Instruction kinds of the largest computation called as a while body."""
    comps: dict[str, list[str]] = {}
    name = None
    for line in hlo.splitlines():
        head = re.match(r"^(?:ENTRY )?%?([\w.\-]+) .*\{$", line)
        if head and not line.startswith(" "):
            name = head.group(1)
            comps[name] = []
        elif name:
            comps[name].append(line)
    bodies = {b for lines in comps.values() for x in lines for b in re.findall(r"body=%?([\w.\-]+)", x)}
    body = max(bodies, key=lambda b: len(comps.get(b, [])))
    kinds = [re.search(r"%([\w-]+?)(?:\.\d+)* = \S+ ([\w-]+)\(", x) for x in comps[body]]
    return collections.Counter(f"{k.group(2)}:{k.group(1)}" for k in kinds if k and k.group(2) != "get-tuple-element")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=16384)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    n, key = args.num_envs, jax.random.key(0)
    env = envhub.make("gymnax/CartPole-v1", num_envs=n)
    same = jax.tree.map(lambda x: jnp.full((n, *jnp.shape(x)), x, jnp.asarray(x).dtype), env.default_params)
    run_c = rollout(with_constants(envhub.make("gymnax/CartPole-v1", num_envs=n)), args.steps)
    run_p = rollout(env, args.steps)
    next_env = envhub.make("gymnax/CartPole-v1", num_envs=n)
    run_baked = jax.jit(lambda k: rollout(next_env, args.steps)(k, same))

    original = JaxState.params
    JaxState.params = property(lambda s: s.next_params)  # type: ignore[method-assign,assignment]
    run_next = rollout(envhub.make("gymnax/CartPole-v1", num_envs=n), args.steps)
    lowered_next = run_next.lower(key, same)
    compiled_next = lowered_next.compile()
    JaxState.params = original  # type: ignore[method-assign]

    raw_env, raw_params = gymnax.make("CartPole-v1")
    raw_same = jax.tree.map(lambda x: jnp.full((n, *jnp.shape(x)), x, jnp.asarray(x).dtype), raw_params)

    def raw(per_env_params: bool):  # gymnax's own step under vmap: params compiled in, or one set per env as input
        axis = 0 if per_env_params else None

        @jax.jit
        def run(key, given):
            params = given if per_env_params else raw_params  # shared: compile-time constants, as make's kwargs
            keys = jax.random.split(key, n)
            _, state = jax.vmap(raw_env.reset, in_axes=(0, axis))(keys, params)

            def body(carry, key):
                state, total = carry
                action_key, step_key = jax.random.split(key)
                actions = jax.random.randint(action_key, (n,), 0, 2)
                step = jax.vmap(raw_env.step, in_axes=(0, 0, 0, axis))
                _, state, reward, *_ = step(jax.random.split(step_key, n), state, actions, params)
                return (state, total + reward.sum()), None

            return jax.lax.scan(body, (state, 0.0), jax.random.split(key, args.steps))[0][1]

        return run

    compiled = {
        "raw, shared": raw(False).lower(key, raw_params).compile(),
        "raw, per-env": raw(True).lower(key, raw_same).compile(),
        "constants": run_c.lower(key, None).compile(),
        "per-env": run_p.lower(key, same).compile(),
        "per-env, next only": compiled_next,
        "per-env, baked": run_baked.lower(key).compile(),
    }
    calls = {
        "raw, shared": lambda: compiled["raw, shared"](key, raw_params),
        "raw, per-env": lambda: compiled["raw, per-env"](key, raw_same),
        "constants": lambda: compiled["constants"](key, None),
        "per-env": lambda: compiled["per-env"](key, same),
        "per-env, next only": lambda: compiled["per-env, next only"](key, same),
        "per-env, baked": lambda: compiled["per-env, baked"](key),
    }
    for f in calls.values():
        jax.block_until_ready(f())
    medians = interleaved_medians({k: (lambda f=f: jax.block_until_ready(f())) for k, f in calls.items()}, args.repeats)
    print(f"gymnax/CartPole-v1, {n} envs x {args.steps} steps, median of {args.repeats} ({jax.default_backend()})")
    for name, seconds in medians.items():
        ops = loop_body_ops(compiled[name].as_text())
        kinds = collections.Counter(k.split(":")[0] for k in ops.elements())
        print(f"  {name:<20} {seconds / args.steps * 1e6:8.2f} us/step  ratio {medians['constants'] / seconds:.3f}  "
              f"loop body: {dict(kinds.most_common(6))}")
        if name.startswith("raw"):
            print(f"      raw per-env / raw shared: {medians['raw, shared'] / medians['raw, per-env']:.3f}")
        elif name != "constants":
            base = loop_body_ops(compiled["constants"].as_text())
            print(f"      more than constants: {dict(ops - base)}; fewer: {dict(base - ops)}")


if __name__ == "__main__":
    main()
