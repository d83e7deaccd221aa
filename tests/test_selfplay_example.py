"""examples/selfplay.py: a short run on pgx connect four writes its files; the committed run (the one
docs/multi-agent.md quotes, made with the example's defaults) wins clearly more often than a random player."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from examples_loader import load_example, short_run

pytest.importorskip("optax", reason="examples/selfplay.py needs optax: pip install -e '.[examples]'")
pytestmark = pytest.mark.requires_plugin("pgx")

ROOT = Path(__file__).resolve().parents[1]
RUN_FILE = ROOT / "examples" / "runs" / "selfplay_connect_four" / "metrics.json"


def load_selfplay():
    return load_example("selfplay")


def test_a_short_run_writes_metrics_and_curve(tmp_path):
    args = ["--total-steps", "4096", "--num-envs", "16", "--num-steps", "16", "--eval-games", "16", "--epochs", "1"]
    saved = short_run("selfplay", args, tmp_path)
    assert saved["eval_unfinished"] == 0 and abs(saved["win_rate"] + saved["draw_rate"] + saved["loss_rate"] - 1) < 1e-6
    assert all(p["mean_game_length"] >= 7 for p in saved["curve"])  # connect four: no game under 7 moves


def test_the_committed_run_beats_random_with_the_examples_defaults():
    run = json.loads(RUN_FILE.read_text())
    defaults = dataclasses.asdict(load_selfplay().Config())
    assert run["config"] == defaults and run["env_id"] == "pgx/connect_four" and run["eval_unfinished"] == 0
    baseline = run["random_vs_random"]["win_rate"]
    assert 0.35 < baseline < 0.65  # a random player wins about half its games against another
    assert run["win_rate"] > baseline + 0.3, f"self-play wins {run['win_rate']:.0%} vs random's {baseline:.0%}"
