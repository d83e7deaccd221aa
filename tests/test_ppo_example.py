"""examples/ppo.py: a short run on gymnax CartPole writes its files and beats a random policy."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import envhub

pytest.importorskip("optax", reason="examples/ppo.py needs optax: pip install -e '.[examples]'")
pytestmark = pytest.mark.requires_plugin("gymnax")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ppo.py"
METRIC_KEYS = {"env_id", "seed", "final_return", "steps_per_second", "config", "curve", "total_env_steps"}


@functools.cache
def load_ppo():
    spec = importlib.util.spec_from_file_location("envhub_example_ppo", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


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
    args = ["gymnax/CartPole-v1", "--total-steps", "24576", "--seed", "3", "--out", str(out)]
    ppo.main(args)

    metrics = json.loads((out / "metrics.json").read_text())
    assert METRIC_KEYS <= metrics.keys()
    assert metrics["env_id"] == "gymnax/CartPole-v1" and metrics["seed"] == 3
    assert metrics["config"]["total_steps"] == 24576 and metrics["steps_per_second"] > 0
    assert metrics["curve"][-1]["env_steps"] == metrics["total_env_steps"] <= 24576
    assert (out / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    random_return = random_policy_return("gymnax/CartPole-v1")
    first = next(p["mean_return"] for p in metrics["curve"] if p["mean_return"] is not None)
    assert metrics["final_return"] > 2 * random_return, (metrics["final_return"], random_return)
    assert metrics["final_return"] > first, metrics["curve"]


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
