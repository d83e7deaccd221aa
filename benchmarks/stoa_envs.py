"""Stoa's Anakin wrapper stack on ``envhub.interop.to_stoa`` vs on Stoa's own gymnax adapter: CartPole-v1.

The stack is Stoix's: ``env -> AddRNGKey -> RecordEpisodeMetrics -> AutoResetWrapper(next_obs_in_extras=True) ->
VmapWrapper(num_envs)``, reset once and stepped in a jitted ``lax.scan`` with random actions. Both sides:

- ``to_stoa(envhub.make("gymnax/CartPole-v1"))``;
- ``GymnaxToStoa(LegacyStepAPIWrapper(env), params)`` of ``gymnax.make("CartPole-v1")``: Stoa 0.1.2's adapter
  unpacks gymnax's classic 5-value step, and gymnax 1.0 returns 6 (its ``LegacyStepAPIWrapper`` gives the 5).

Both pay Stoa's auto-reset on top of their own (gymnax's step and envhub's both restart an episode that ends). Every
step of both earns reward 1, so the totals must match (same work); medians of interleaved repeats, one process.

    python benchmarks/stoa_cartpole.py [--num-envs 1024] [--steps 1000] [--repeats 9] [--json out.json]
"""

from __future__ import annotations

import argparse

import gymnax
import jax
from _timing import comparison_row, compile_timed, interleaved_medians, write_json
from gymnax.wrappers import LegacyStepAPIWrapper
from stoa import AddRNGKey, AutoResetWrapper, RecordEpisodeMetrics
from stoa.core_wrappers.vmap import VmapWrapper
from stoa.env_adapters.gymnax import GymnaxToStoa

import envhub
from envhub.interop import to_stoa

#: envhub's own restart made a select of the first state: Stoa's auto-reset replaces a restarted state anyway, and
#: restarts every episode through the export's reset (a fresh state from its key), so the episodes are the same.
CACHED = "to_stoa, reset_mode='cached'"


def anakin_rollout(env, num_envs: int, steps: int):
    """Stoix's Anakin stack on the Stoa env ``env``: ``key -> (total reward, episode ends)`` over ``steps`` steps."""
    stack = VmapWrapper(AutoResetWrapper(RecordEpisodeMetrics(AddRNGKey(env)), next_obs_in_extras=True), num_envs)

    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = stack.reset(init_key)

        def body(carry, key):
            state, total, ends = carry
            actions = jax.random.randint(key, (num_envs,), 0, 2)
            state, ts = stack.step(state, actions)
            return (state, total + ts.reward.sum(), ends + ts.last().sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", default="1024", help="comma-separated batch sizes")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    args = parser.parse_args()

    print(
        f"CartPole-v1 under Stoa's Anakin stack, {args.steps} scan steps, median of {args.repeats} interleaved "
        f"repeats (jax {jax.__version__}, {jax.devices()[0].platform})"
    )
    rows, key = [], jax.random.key(0)
    for num_envs in [int(n) for n in args.num_envs.split(",")]:
        raw_env, params = gymnax.make("CartPole-v1")
        runs = {
            "GymnaxToStoa (raw gymnax)": anakin_rollout(
                GymnaxToStoa(LegacyStepAPIWrapper(raw_env), params), num_envs, args.steps
            ),
            "to_stoa": anakin_rollout(to_stoa(envhub.make("gymnax/CartPole-v1")), num_envs, args.steps),
            CACHED: anakin_rollout(
                to_stoa(envhub.make("gymnax/CartPole-v1", reset_mode="cached")), num_envs, args.steps
            ),
        }
        compiled = {name: compile_timed(run, key) for name, run in runs.items()}
        compiles = {name: seconds for name, (_, seconds) in compiled.items()}
        out = {name: jax.device_get(fn(key)) for name, (fn, _) in compiled.items()}
        totals, ends = {n: float(o[0]) for n, o in out.items()}, {n: int(o[1]) for n, o in out.items()}
        assert len(set(totals.values())) == 1, f"not the same work: {totals}"  # CartPole pays 1 per step
        medians = interleaved_medians(
            {n: (lambda f=f: jax.block_until_ready(f(key))) for n, (f, _) in compiled.items()}, args.repeats
        )
        raw = "GymnaxToStoa (raw gymnax)"
        row = comparison_row("stoa", "CartPole-v1", num_envs, args.steps, medians, compiles, "to_stoa", raw)
        cached = round(num_envs * args.steps / medians[CACHED], 1)
        row.update(envhub_cached_steps_per_s=cached, ratio_cached=round(medians[raw] / medians[CACHED], 3))
        rows.append({**row, "episode_ends": ends})
        print(
            f"  num_envs={num_envs:<6} GymnaxToStoa {row['raw_steps_per_s'] / 1e6:7.3f} M/s   "
            f"to_stoa {row['envhub_steps_per_s'] / 1e6:7.3f} M/s   ratio {row['ratio']:.3f} (target >= 1.0)   "
            f"reset_mode='cached' {cached / 1e6:7.3f} M/s   ratio {row['ratio_cached']:.3f}   "
            f"compile {row['raw_compile_s']:.2f}s / {row['envhub_compile_s']:.2f}s   episode ends {ends}"
        )
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
