"""``torchrl.envs.utils.check_env_specs`` on ``to_torchrl`` of five envhub backends' envs (issue 51).

The test suite checks gymnax CartPole and gymnasium CartPole (``tests/test_interop_torchrl.py``, in the side venv of
``tests/test_sb3_cpu_torch.py``); brax, jumanji and craftax compile for seconds to a minute each on a CPU, more than
the suite's budget allows, so this script checks all five, batched (``num_envs=4``) and unbatched, and also runs
``env.rollout(200, break_when_any_done=False)`` (partial resets) on each batched one. Needs CPU torch,
``envhub[torchrl,gymnax,gymnasium,brax,jumanji,craftax]``.

    python benchmarks/torchrl_check_specs.py [--json benchmarks/results/torchrl_check_specs.json]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import time
import traceback

import torch
from torchrl.envs.utils import check_env_specs

import envhub
from envhub.interop import to_torchrl

IDS = (
    "gymnax/CartPole-v1",
    "brax/inverted_pendulum",
    "jumanji/Snake-v1",
    "craftax/Craftax-Classic-Symbolic-v1",
    "gymnasium/CartPole-v1",
)


def check(env_id: str, num_envs: int | None) -> dict[str, object]:
    start = time.perf_counter()
    row: dict[str, object] = {"id": env_id, "num_envs": num_envs}
    try:
        env = to_torchrl(envhub.make(env_id, num_envs=num_envs))
        row["observation_spec"] = {str(k): type(v).__name__ for k, v in env.observation_spec.items(True, True)}
        row["action_spec"] = type(env.action_spec).__name__
        check_env_specs(env, seed=0)
        if num_envs is not None:
            data = env.rollout(200, break_when_any_done=False)
            row["episode_ends_in_200_steps"] = int(data["next", "done"].sum())
        row["check_env_specs"] = "passed"
        env.close()
    except Exception as exc:  # noqa: BLE001 - reported, the others still run
        row["check_env_specs"] = f"FAILED: {type(exc).__name__}: {exc}"
        traceback.print_exc()
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    rows = []
    for env_id in IDS:
        for num_envs in (4, None):
            row = check(env_id, num_envs)
            print(f"{env_id:<38} num_envs={num_envs!s:<5} {row['check_env_specs']}  ({row['seconds']} s)", flush=True)
            rows.append(row)
    if args.json:
        packages = ("torch", "torchrl", "jax", "gymnax", "brax", "jumanji", "craftax", "gymnasium")
        result = {"versions": {p: importlib.metadata.version(p) for p in packages}, "rows": rows}
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    assert all(row["check_env_specs"] == "passed" for row in rows), "a check failed (above)"
    print(f"all {len(rows)} passed (torch {torch.__version__})")


if __name__ == "__main__":
    main()
