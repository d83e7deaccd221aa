"""Stoa's Anakin wrapper stack on ``envhub.interop.to_stoa`` vs on Stoa's own adapters: gymnax and brax.

The stack is Stoix's: ``env -> AddRNGKey -> RecordEpisodeMetrics -> AutoResetWrapper(next_obs_in_extras=True) ->
VmapWrapper(num_envs)``, reset once and stepped in a jitted ``lax.scan`` with random actions (uniform discrete on
CartPole, uniform in [-1, 1] on brax). Two loops per env, medians of interleaved repeats, one process:

- the raw baseline, Stoa's adapter of the library's own env:
  - ``CartPole-v1`` (1024 envs, 1000 steps): ``GymnaxToStoa(LegacyStepAPIWrapper(env), params)`` of
    ``gymnax.make("CartPole-v1")`` (Stoa 0.1.2's adapter unpacks gymnax's classic 5-value step; gymnax 1.0 returns 6).
    gymnax's step restarts an ended episode itself, so this side pays Stoa's auto-reset on top of gymnax's own.
  - ``inverted_pendulum`` (64 envs, 200 steps, episodes of 50, the mjx pipeline, as ``benchmarks/brax_envs.py``):
    Stoix's ``make_brax_env``, ``BraxToStoa(brax.envs.create(name, auto_reset=False, episode_length=50,
    backend="mjx"))``: brax's ``EpisodeWrapper`` (the time limit, ``info["truncation"]``) and no restart of brax's
    own, so Stoa's auto-reset is its only one.
- ``to_stoa(envhub.make(id, ...))`` as made: envhub leaves restarts to Stoa's ``AutoResetWrapper`` (one reset per
  episode end, Stoa's; under the vmap it is computed every step, on both sides).

CartPole's two loops finish the same episodes (checked); brax's raw loop starts its episodes from other keys.

    python benchmarks/stoa_envs.py [--envs CartPole-v1,inverted_pendulum] [--num-envs N,...] [--steps N]
        [--repeats 9] [--quick] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
from _timing import comparison_row, time_rollouts, write_json
from stoa import AddRNGKey, AutoResetWrapper, RecordEpisodeMetrics
from stoa.core_wrappers.vmap import VmapWrapper

import envhub
from envhub.interop import to_stoa

RAW, ENVHUB = "raw", "to_stoa"


class Case(NamedTuple):
    envhub_id: str
    make_kwargs: dict[str, Any]
    raw_label: str
    raw_env: Callable[[], Any]  # Stoa's adapter of the library's own env
    sample: Callable[[jax.Array, int], jax.Array]  # random actions of a batch
    num_envs: int
    steps: int
    same_episodes: bool  # the raw loop starts its episodes from the same keys as the export's
    target: float  # issue 59's target for to_stoa / raw


def gymnax_cartpole() -> Any:
    import gymnax
    from gymnax.wrappers import LegacyStepAPIWrapper
    from stoa.env_adapters.gymnax import GymnaxToStoa

    env, params = gymnax.make("CartPole-v1")
    return GymnaxToStoa(LegacyStepAPIWrapper(env), params)


def brax_pendulum() -> Any:
    with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():  # mujoco's import notices; brax's
        warnings.filterwarnings("ignore", "Brax System", UserWarning)  # "not actively maintained" notice
        from brax import envs
        from stoa.env_adapters.brax import BraxToStoa

        # as Stoix's make_brax_env: brax's time limit, no brax auto-reset (Stoa's wrapper restarts)
        return BraxToStoa(envs.create("inverted_pendulum", episode_length=50, auto_reset=False, backend="mjx"))


CASES = {
    "CartPole-v1": Case(
        "gymnax/CartPole-v1",
        {},
        "GymnaxToStoa (raw gymnax)",
        gymnax_cartpole,
        lambda key, n: jax.random.randint(key, (n,), 0, 2),
        1024,
        1000,
        True,
        1.0,
    ),
    "inverted_pendulum": Case(
        "brax/inverted_pendulum",
        {"episode_length": 50, "backend": "mjx"},
        "BraxToStoa (raw brax)",
        brax_pendulum,
        lambda key, n: jax.random.uniform(key, (n, 1), minval=-1.0, maxval=1.0),
        64,
        200,
        False,
        0.95,
    ),
}


def anakin_rollout(env: Any, sample: Callable[[jax.Array, int], jax.Array], num_envs: int, steps: int):
    """Stoix's Anakin stack on the Stoa env ``env``: ``key -> (total reward, episode ends)`` over ``steps`` steps."""
    stack = VmapWrapper(AutoResetWrapper(RecordEpisodeMetrics(AddRNGKey(env)), next_obs_in_extras=True), num_envs)

    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = stack.reset(init_key)

        def body(carry, key):
            state, total, ends = carry
            state, ts = stack.step(state, sample(key, num_envs))
            return (state, total + ts.reward.sum(), ends + ts.last().sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def bench(name: str, num_envs: int, steps: int, repeats: int) -> dict[str, Any]:
    case = CASES[name]
    runs = {
        case.raw_label: anakin_rollout(case.raw_env(), case.sample, num_envs, steps),
        ENVHUB: anakin_rollout(to_stoa(envhub.make(case.envhub_id, **case.make_kwargs)), case.sample, num_envs, steps),
    }
    medians, compiles, ends = time_rollouts(runs, jax.random.key(0), repeats)
    if case.same_episodes:
        assert len(set(ends.values())) == 1, f"not the same episodes: {ends}"
    raw = case.raw_label
    row = comparison_row("stoa", name, num_envs, steps, medians, compiles, ENVHUB, raw)
    print(
        f"  {name:<18} num_envs={num_envs:<5} {raw} {row['raw_steps_per_s'] / 1e6:6.3f} M/s   "
        f"to_stoa {row['envhub_steps_per_s'] / 1e6:6.3f} M/s ratio {row['ratio']:.3f} (target >= {case.target})   "
        f"compile raw/to_stoa {compiles[raw]:.1f}/{compiles[ENVHUB]:.1f} s   episode ends {ends[raw]}/{ends[ENVHUB]}",
        flush=True,
    )
    return {**row, "episode_ends": ends}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default=",".join(CASES), help=f"comma-separated, of {', '.join(CASES)}")
    parser.add_argument("--num-envs", default=None, help="comma-separated batch sizes (default: each env's own)")
    parser.add_argument("--steps", type=int, default=None, help="scan steps (default: each env's own)")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="a tiny configuration (smoke test, not figures)")
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    args = parser.parse_args()
    if args.quick:
        args.num_envs, args.steps, args.repeats = args.num_envs or "8", args.steps or 20, 2
    names = args.envs.split(",")
    for name in names:
        if name not in CASES:
            parser.error(f"--envs: {name!r} is not one of {', '.join(CASES)}; pick from those.")
    print(
        f"Stoa's Anakin stack, medians of {args.repeats} interleaved repeats, ratio = to_stoa / raw throughput "
        f"(jax {jax.__version__}, {jax.devices()[0].platform})",
        flush=True,
    )
    rows = []
    for name in names:
        sizes = [CASES[name].num_envs] if args.num_envs is None else [int(n) for n in args.num_envs.split(",")]
        for num_envs in sizes:
            rows.append(bench(name, num_envs, args.steps or CASES[name].steps, args.repeats))
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
