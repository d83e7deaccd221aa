"""examples/ippo.py: a short run on JaxMARL's MPE simple_spread writes its files; the committed run (the one
docs/multi-agent.md quotes, made with the example's defaults) beats the random policy it measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from examples_loader import load_example, short_run

pytest.importorskip("optax", reason="examples/ippo.py needs optax: pip install -e '.[examples]'")
pytestmark = pytest.mark.requires_plugin("jaxmarl")

ROOT = Path(__file__).resolve().parents[1]
RUN_FILE = ROOT / "examples" / "runs" / "ippo_spread" / "metrics.json"


def load_ippo():
    return load_example("ippo")


def test_a_short_run_writes_metrics_and_curve(tmp_path):
    args = ["--total-steps", "2000", "--num-envs", "8", "--eval-episodes", "8", "--epochs", "1"]
    saved = short_run("ippo", args, tmp_path)
    assert saved["agents"] == 3 and saved["total_env_steps"] >= 2000 - 8 * 26
    assert saved["eval_unfinished"] == 0 and saved["final_return"] < 0 and saved["random_return"] < 0  # MPE: distances


def test_the_committed_run_beats_random_with_the_examples_defaults():
    run = json.loads(RUN_FILE.read_text())
    defaults = load_ippo().DEFAULTS
    assert {k: run["config"][k] for k in defaults} == defaults and run["config"]["seed"] == 0
    assert run["env_id"] == "jaxmarl/MPE_simple_spread_v3" and run["eval_unfinished"] == 0
    margin = run["final_return"] - run["random_return"]
    assert margin > 0.2 * abs(run["random_return"]), (
        f"IPPO {run['final_return']:.2f} vs random {run['random_return']:.2f}"
    )
