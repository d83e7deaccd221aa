"""examples/ppo.py: a short run on gymnax CartPole writes its files and beats a random policy; the docs quote
the committed run file (benchmarks/results/ppo/runs.json), made with the example's default config."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from examples_loader import load_example

import envhub

pytest.importorskip("optax", reason="examples/ppo.py needs optax: pip install -e '.[examples]'")
pytestmark = pytest.mark.requires_plugin("gymnax")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "ppo.py"
RUN_FILE = ROOT / "benchmarks" / "results" / "ppo" / "runs.json"
METRIC_KEYS = {"env_id", "seed", "final_return", "steps_per_second", "config", "curve", "total_env_steps"}
METRIC_KEYS |= {"final_return_std", "eval_episodes", "eval_unfinished", "train_return_last_10pct"}


def load_ppo():
    return load_example("ppo")


def random_policy_return(env_id: str, num_envs: int = 64, steps: int = 500) -> float:
    """Mean return of the episodes a uniformly random policy finishes (measured, not assumed)."""
    env = envhub.make(env_id, num_envs=num_envs)

    @jax.jit
    def run(key):
        def body(carry, key):
            state, ep_return, total, count = carry
            action_key, step_key = jax.random.split(key)
            state, ts = env.step(step_key, state, env.action_space.sample(action_key))
            ep_return = ep_return + ts.reward
            total = total + jnp.where(ts.done, ep_return, 0.0).sum()
            return (state, jnp.where(ts.done, 0.0, ep_return), total, count + ts.done.sum()), None

        state, _ = env.init(key)
        zero = jnp.zeros(num_envs)
        (_, _, total, count), _ = jax.lax.scan(body, (state, zero, 0.0, 0), jax.random.split(key, steps))
        return total / count

    return float(run(jax.random.key(1)))


def test_short_cartpole_run_writes_metrics_and_plot_and_learns(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="curve.png needs matplotlib")
    ppo = load_ppo()
    out = tmp_path / "run"
    # 24 updates, a larger step size than the default's so that so few show learning clearly (~270 at seeds 3-5)
    args = ["gymnax/CartPole-v1", "--total-steps", "24576", "--lr", "1e-3", "--eval-episodes", "32", "--seed", "3"]
    ppo.main([*args, "--out", str(out)])

    metrics = json.loads((out / "metrics.json").read_text())
    assert METRIC_KEYS <= metrics.keys()
    assert metrics["env_id"] == "gymnax/CartPole-v1" and metrics["seed"] == 3
    assert metrics["config"]["total_steps"] == 24576 and metrics["steps_per_second"] > 0
    assert metrics["eval_episodes"] == 32 and metrics["eval_unfinished"] == 0  # CartPole's time limit ends them all
    assert metrics["curve"][-1]["env_steps"] == metrics["total_env_steps"] <= 24576
    assert (out / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    random_return = random_policy_return("gymnax/CartPole-v1")
    first = next(p["mean_return"] for p in metrics["curve"] if p["mean_return"] is not None)
    assert metrics["final_return"] > 4 * random_return, (metrics["final_return"], random_return)
    assert metrics["final_return"] > first, metrics["curve"]


def test_evaluation_plays_one_whole_episode_per_env() -> None:
    ppo = load_ppo()
    env = envhub.make("gymnax/CartPole-v1", num_envs=16, max_episode_steps=40)
    head = ppo.head_for(env.single_action_space)
    params = {"actor": ppo._mlp_init(jax.random.key(0), [4, 8, head.size], 0.01), "log_std": jnp.zeros(head.size)}
    params["critic"] = ppo._mlp_init(jax.random.key(1), [4, 8, 1], 1.0)
    returns, finished = jax.jit(functools.partial(ppo.evaluate, env))(params, jax.random.key(2))
    # CartPole pays 1 per step, so a return is its episode's length. The loop runs until the longest episode
    # ends: an env whose episode ended sooner keeps its shorter return (no steps of its next episode count).
    assert bool(finished.all()) and returns.shape == (16,)
    assert bool(((returns >= 1) & (returns <= 40)).all()) and len(set(returns.tolist())) > 1, returns


def test_docs_quote_the_run_file_made_with_the_default_config() -> None:
    ppo = load_ppo()
    runs = json.loads(RUN_FILE.read_text())["runs"]
    cartpole = runs["gymnax-cartpole"]
    default = dataclasses.asdict(ppo.Config())
    del default["seed"]
    assert cartpole["config"] == default, "the default Config changed: rerun python benchmarks/ppo_curves.py"
    assert sorted(cartpole["seeds"]) == ["0", "1", "2"]
    mean = sum(r["final_return"] for r in cartpole["seeds"].values()) / 3
    assert mean == pytest.approx(cartpole["mean_final_return"]) and mean >= 475
    training, readme = (ROOT / "docs" / "training.md").read_text(), (ROOT / "README.md").read_text()
    for page in (training, readme):
        assert "benchmarks/results/ppo/runs.json" in page and f"{mean:.1f}" in page


def test_gaussian_head_clips_actions_and_scores_the_unclipped_sample() -> None:
    ppo = load_ppo()
    head = ppo.head_for(envhub.spaces.Box(-1.0, 1.0, shape=(2,)))
    out, log_std = jnp.zeros((5, 2)), jnp.zeros(2)
    raw = 3.0 * jnp.ones((5, 2))
    assert jnp.array_equal(head.to_env(raw), jnp.ones((5, 2)))
    expected = jax.scipy.stats.norm.logpdf(3.0) * 2
    assert jnp.allclose(head.log_prob(out, log_std, raw), expected)


def test_unsupported_action_space_is_an_envhub_error() -> None:
    ppo = load_ppo()
    with pytest.raises(envhub.errors.InvalidArgumentError, match="MultiDiscrete"):
        ppo.head_for(envhub.spaces.MultiDiscrete([2, 3]))
