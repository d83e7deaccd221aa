"""envhub's gymnax backend vs gymnax called directly: CartPole-v1, jitted lax.scan, batched.

Every loop does the same work per step: split the key, sample random actions, step every
environment with a same-step auto-reset and accumulate reward and episode ends. gymnax's own
``step`` computes a reset for every env on every step, from a key split off the step key. A second
raw loop does what the peer hub Jaxnasium 0.1.1 does: the reset reuses the step key (no split; the
same key drives the step and the next episode's start). envhub splits it, and by default resets
only what ended, from spare initial states made one batch at a time (``envhub.native.resets``), so
its episodes start from other (equally random) states than gymnax's own: the totals match, the
trajectories do not. ``make(..., reset_spares=False)`` gives gymnax's own resets.

On a GPU or TPU envhub's default for gymnax is no spares (every env resets on every step, no branch:
``envhub.native.auto_reset``); ``--schemes`` also times both schemes explicitly.

    python benchmarks/gymnax_cartpole.py [--num-envs 1,64,1024] [--steps 1000] [--repeats 9] [--schemes] [--json out.json]
"""

from __future__ import annotations

import argparse

import gymnax
import jax
from _timing import comparison_row, first_call_seconds, interleaved_medians, write_json

import envhub


def raw_loop(num_envs: int, steps: int, step):
    """gymnax's batched reset, then ``steps`` scan steps of ``step(keys, state, actions) -> (state, reward, done)``."""
    env, params = gymnax.make("CartPole-v1")
    reset = jax.vmap(env.reset, in_axes=(0, None))

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        _, state = reset(jax.random.split(init_key, num_envs), params)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            actions = jax.random.randint(action_key, (num_envs,), 0, 2)
            state, reward, done = step(jax.random.split(step_key, num_envs), state, actions)
            return (state, total + reward.sum(), ends + done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def raw_gymnax_rollout(num_envs: int, steps: int):
    """gymnax's own ``step``: a reset for every env on every step, from a key split off the step key."""
    env, params = gymnax.make("CartPole-v1")
    step = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def step_all(keys, state, actions):
        _, state, reward, terminated, truncated, _ = step(keys, state, actions, params)
        return state, reward, terminated | truncated

    return raw_loop(num_envs, steps, step_all)


def raw_gymnax_reusing_key(num_envs: int, steps: int):
    """gymnax's ``step_env`` and ``reset_env`` with one key each step, selected on done (Jaxnasium's scheme)."""
    env, params = gymnax.make("CartPole-v1")

    def step_one(key, state, action):
        _, stepped, reward, done, _ = env.step_env(key, state, action, params)
        _, restarted = env.reset_env(key, params)  # the same key: a key used twice
        state = jax.tree.map(lambda r, s: jax.lax.select(done, r, s), restarted, stepped)
        return state, reward, done

    return raw_loop(num_envs, steps, jax.vmap(step_one))


def envhub_rollout(num_envs: int, steps: int, **make_kwargs):
    env = envhub.make("gymnax/CartPole-v1", num_envs=num_envs, **make_kwargs)

    @jax.jit
    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            actions = jax.random.randint(action_key, (num_envs,), 0, 2)
            state, ts = env.step(step_key, state, actions)
            return (state, total + ts.reward.sum(), ends + ts.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", default="1024", help="comma-separated batch sizes")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    parser.add_argument(
        "--schemes", action="store_true", help="also time envhub with reset_spares=True and =False (both schemes)"
    )
    args = parser.parse_args()

    key = jax.random.key(0)
    rows = []
    print(
        f"CartPole-v1, {args.steps} scan steps, median of {args.repeats} interleaved repeats "
        f"(jax {jax.__version__}, {jax.devices()[0].platform})"
    )
    for num_envs in [int(n) for n in args.num_envs.split(",")]:
        runs = {
            "gymnax (raw)": raw_gymnax_rollout(num_envs, args.steps),
            "gymnax (raw, key reused)": raw_gymnax_reusing_key(num_envs, args.steps),
            "envhub": envhub_rollout(num_envs, args.steps),
        }
        if args.schemes:  # the default picks one (spares on a CPU, none on a GPU for gymnax): time both
            runs["envhub, spares"] = envhub_rollout(num_envs, args.steps, reset_spares=True)
            runs["envhub, no spares"] = envhub_rollout(num_envs, args.steps, reset_spares=False)
        compiles = {name: first_call_seconds(lambda r=run: r(key)) for name, run in runs.items()}
        totals = {name: float(run(key)[0]) for name, run in runs.items()}
        assert len(set(totals.values())) == 1, f"not the same work: {totals}"  # CartPole pays 1 per step
        medians = interleaved_medians(
            {n: (lambda r=r: jax.block_until_ready(r(key))) for n, r in runs.items()}, args.repeats
        )
        row = comparison_row("gymnax", "CartPole-v1", num_envs, args.steps, medians, compiles, "envhub", "gymnax (raw)")
        reused = num_envs * args.steps / medians["gymnax (raw, key reused)"]
        row.update(
            raw_key_reused_steps_per_s=round(reused, 1),
            ratio_vs_key_reused=round(row["envhub_steps_per_s"] / reused, 3),
        )
        for name in ("envhub, spares", "envhub, no spares"):
            if name in medians:
                key_name = name.replace(", ", "_").replace(" ", "_")
                row[f"{key_name}_steps_per_s"] = round(num_envs * args.steps / medians[name], 1)
                row[f"ratio_{key_name}"] = round(medians["gymnax (raw)"] / medians[name], 3)
                print(f"  num_envs={num_envs:<6} {name}: ratio {row[f'ratio_{key_name}']:.3f} vs gymnax (raw)")
        rows.append(row)
        print(
            f"  num_envs={num_envs:<6} raw {row['raw_steps_per_s'] / 1e6:7.3f} M/s   envhub {row['envhub_steps_per_s'] / 1e6:7.3f} M/s"
            f"   ratio {row['ratio']:.3f} (target >= 1.3)   key reused {reused / 1e6:7.3f} M/s, envhub/it {row['ratio_vs_key_reused']:.3f}"
            f"   compile raw {row['raw_compile_s']:.2f}s envhub {row['envhub_compile_s']:.2f}s"
        )
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
