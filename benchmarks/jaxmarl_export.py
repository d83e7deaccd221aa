"""``envhub.interop.to_jaxmarl`` vs the raw jaxmarl env, both driven the way JaxMARL's baselines drive an env.

Both loops are the raw loop of ``jaxmarl_envs.py``: ``jax.vmap`` of the env's ``reset`` and ``step`` over
``num_envs`` envs (JaxMARL code vmaps itself; the export wraps an unbatched envhub env), random actions per agent,
one jitted ``lax.scan``. The raw side is jaxmarl's ``step`` (``step_env``, then a ``reset`` for every env on
every step, kept where the episode ended); the export's is envhub's same-step auto-reset, with terminated,
truncated and the final observations in ``infos`` (unused here, as in a baseline that reads only ``done``).

    python benchmarks/jaxmarl_export.py [--envs MPE_simple_spread_v3] [--num-envs 64] [--steps 500]
        [--repeats 9] [--json benchmarks/results/jaxmarl_export.json]
"""

from __future__ import annotations

import argparse
import importlib.metadata

import jax
from _timing import compare_each, write_json
from jaxmarl_envs import marl_rollout, raw_jaxmarl_rollout

import envhub
from envhub.interop import to_jaxmarl


def export_rollout(name: str, num_envs: int, steps: int):
    return marl_rollout(to_jaxmarl(envhub.make(f"jaxmarl/{name}")), num_envs, steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envs", default="MPE_simple_spread_v3", help="comma-separated jaxmarl ids")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the comparison rows as JSON")
    args = parser.parse_args()
    print(
        f"to_jaxmarl vs raw jaxmarl: {args.num_envs} envs (vmapped), {args.steps} scan steps, random actions, median "
        f"of {args.repeats} interleaved repeats (jax {jax.__version__}, jaxmarl {importlib.metadata.version('jaxmarl')}, "
        f"{jax.devices()[0].platform})"
    )
    size = (args.num_envs, args.steps)
    rows = compare_each(
        "jaxmarl",
        args.envs.split(","),
        lambda n: raw_jaxmarl_rollout(n, *size),
        lambda n: export_rollout(n, *size),
        size,
        args.repeats,
    )
    loop = "jax.vmap(env.step) of to_jaxmarl(envhub.make('jaxmarl/<env>')) in lax.scan"
    write_json([{**row, "envhub_loop": loop} for row in rows], args.json)


if __name__ == "__main__":
    main()
