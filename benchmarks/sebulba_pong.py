"""``envhub.interop.sebulba_factory`` against the backends' own Python loops: Pong, 16 envs, as a Sebulba actor steps.

- ``envpool loop`` (the raw baseline): ``envpool.make("Pong-v5", env_type="gymnasium", num_envs=N)`` and
  ``env.step(actions)`` in a Python loop (envpool's next-step reset; its ``v5`` defaults, as envhub's).
- ``factory envpool``: ``sebulba_factory("envpool/Pong-v5")(N)``, ``reset(seed=[...])`` then ``step(actions)`` in a
  Python loop: same-step auto-reset, Stoa TimeSteps with ``extras["metrics"]`` (NumPy on the host: no device given).
- ``ale loop`` / ``factory ale``: the same with ale-py's ``AtariVectorEnv`` (its v5 settings) and ``"ale/Pong-v5"``.

Every loop steps the same NumPy random actions; the loops of one backend run interleaved in one process and
medians of ``--repeats`` are printed with the ratio factory / own loop.

Run: ``python benchmarks/sebulba_pong.py [--backends envpool,ale] [--steps 300] [--repeats 7] [--json out.json]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np
from _timing import comparison_row, interleaved_medians, write_json

from envhub.interop import sebulba_factory


def actions(n: int, steps: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 6, (steps, n)).astype(np.int32)


def looped(step: Callable[[np.ndarray], Any], acts: np.ndarray) -> Callable[[], None]:
    def run() -> None:
        for a in acts:
            out = step(a)
        np.asarray(out[0] if isinstance(out, tuple) else out.observation)  # the last step's arrays are ready

    return run


def envpool_loop(n: int, acts: np.ndarray) -> tuple[Callable[[], None], Callable[[], None]]:
    import envpool

    env = envpool.make("Pong-v5", env_type="gymnasium", num_envs=n, seed=0)
    env.reset()
    return looped(env.step, acts), env.close


def ale_loop(n: int, acts: np.ndarray) -> tuple[Callable[[], None], Callable[[], None]]:
    from ale_py.vector_env import AtariVectorEnv
    from ale_xla import PRESETS

    env = AtariVectorEnv("pong", num_envs=n, **PRESETS["v5"])
    env.reset(seed=0)
    return looped(env.step, acts), env.close


def factory_loop(env_id: str, n: int, acts: np.ndarray) -> tuple[Callable[[], None], Callable[[], None]]:
    envs = sebulba_factory(env_id)(n)
    envs.reset(seed=list(range(n)))
    return looped(envs.step, acts), envs.close


RAW = {"envpool": envpool_loop, "ale": ale_loop}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="envpool,ale", help="comma-separated: envpool, ale")
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    acts = actions(args.num_envs, args.steps)
    rows = []
    for backend in args.backends.split(","):
        raw, raw_close = RAW[backend](args.num_envs, acts)
        ours, ours_close = factory_loop(f"{backend}/Pong-v5", args.num_envs, acts)
        raw(), ours()  # warm: first steps, compiles
        names = (f"{backend} loop", f"factory {backend}")
        medians = interleaved_medians(dict(zip(names, (raw, ours))), args.repeats)
        raw_close(), ours_close()
        row = comparison_row(backend, "Pong-v5", args.num_envs, args.steps, medians, {}, names[1], names[0])
        print(f"{backend}: own loop {row['raw_steps_per_s']:.0f} steps/s, factory {row['envhub_steps_per_s']:.0f} "
              f"steps/s: {row['ratio']:.3f}x")  # fmt: skip
        rows.append(row)
    write_json(rows, args.json)


if __name__ == "__main__":
    main()
