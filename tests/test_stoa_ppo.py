"""A PPO written against Stoa's API only, as Stoix's ``ff_ppo`` is, solves CartPole on ``envhub.interop.to_stoa``.

Stoix's Anakin stack (``AddRNGKey``, ``RecordEpisodeMetrics``, ``AutoResetWrapper(next_obs_in_extras=True)``,
``VmapWrapper``) over ``to_stoa(envhub.make("gymnax/CartPole-v1"))``; GAE that bootstraps a truncated episode from
``V(extras["next_obs"])`` and a terminated one from nothing (``discount == 0``), cutting the trace at every LAST
step; the returns Stoix logs (``extras["episode_metrics"]`` at terminal steps). One jitted program: 4 envs x 128
steps x 1960 updates (about 1M steps, PureJaxRL's CartPole settings), then the greedy policy plays one episode in
each of 32 envs (seeds 0 to 3 all reach 500 there; at 500k steps one of them stayed near 150)"""

from __future__ import annotations

import pytest

pytest.importorskip("stoa", reason="to_stoa needs stoa-env: pip install 'envhub[stoa]'")
optax = pytest.importorskip("optax", reason="the PPO needs optax: pip install -e '.[examples]'")
pytestmark = pytest.mark.requires_plugin("gymnax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from ppo_parts import GAMMA, advantages, forward, learn, networks, optimizer, sample, value  # noqa: E402
from stoa import AddRNGKey, AutoResetWrapper, RecordEpisodeMetrics  # noqa: E402
from stoa.core_wrappers.vmap import VmapWrapper  # noqa: E402

import envhub  # noqa: E402
from envhub.interop import to_stoa  # noqa: E402

ENVS, STEPS, UPDATES, EPOCHS, MINIBATCHES = 4, 128, 1960, 4, 4
EVAL_ENVS, LIMIT = 32, 500  # CartPole's time limit: every evaluation episode ends within it


def make_train():
    """PureJaxRL's shape: the env made here, ``train(key)`` jitted whole (``envhub.make`` runs on the host)."""
    env = VmapWrapper(AutoResetWrapper(RecordEpisodeMetrics(AddRNGKey(to_stoa(envhub.make("gymnax/CartPole-v1")))),
                                       next_obs_in_extras=True), ENVS)  # fmt: skip
    evaluation = VmapWrapper(RecordEpisodeMetrics(AddRNGKey(to_stoa(envhub.make("gymnax/CartPole-v1")))), EVAL_ENVS)
    obs_size, actions = env.observation_space().shape[0], env.action_space().num_values

    def greedy_returns(params, key):
        """The return of each eval env's first episode under the greedy policy (argmax of the logits)."""

        def step(carry, _):
            state, ts = carry
            state, ts = evaluation.step(state, forward(params["pi"], ts.observation).argmax(-1))
            metrics = ts.extras["episode_metrics"]
            return (state, ts), (metrics["episode_return"], metrics["is_terminal_step"])

        returns, ends = jax.lax.scan(step, evaluation.reset(key), None, LIMIT)[1]
        first = ends & (jnp.cumsum(ends, axis=0) == 1)
        return jnp.where(first, returns, 0.0).sum(0)

    def train(key):
        actor_key, critic_key, env_key, eval_key, key = jax.random.split(key, 5)
        params = networks(actor_key, critic_key, obs_size, actions)
        tx = optimizer(UPDATES, EPOCHS, MINIBATCHES)

        def env_step(carry, key):
            params, state, ts = carry
            action, logp = sample(params, ts.observation, key)
            state, next_ts = env.step(state, action)
            # Stoix's bootstrap: V of the observation reached (extras["next_obs"]), unless the episode terminated
            boot = GAMMA * next_ts.discount * value(params, next_ts.extras["next_obs"])
            metrics = next_ts.extras["episode_metrics"]
            out = (ts.observation, action, logp, value(params, ts.observation), next_ts.reward, boot, next_ts.last())
            return (params, state, next_ts), (out, metrics["episode_return"], metrics["is_terminal_step"])

        def update(carry, key):
            params, opt, state, ts = carry
            rollout_key, key = jax.random.split(key)
            (_, state, ts), (traj, returns, ends) = jax.lax.scan(
                env_step, (params, state, ts), jax.random.split(rollout_key, STEPS)
            )
            obs, action, logp, v, reward, boot, last = traj
            adv = advantages(reward, boot, v, last)  # the trace is cut at every LAST step: a new episode follows
            params, opt = learn(tx, params, opt, (obs, action, logp, v, adv), key, EPOCHS, MINIBATCHES)
            return (params, opt, state, ts), (jnp.where(ends, returns, 0.0).sum(), ends.sum())

        state, ts = env.reset(env_key)
        carry, curve = jax.lax.scan(update, (params, tx.init(params), state, ts), jax.random.split(key, UPDATES))
        return curve, greedy_returns(carry[0], eval_key)

    return train


def test_a_stoa_api_ppo_solves_cartpole_on_the_export():
    (sums, counts), greedy = jax.device_get(jax.jit(make_train())(jax.random.key(0)))
    curve = [round(float(s.sum() / max(c.sum(), 1))) for s, c in zip(sums.reshape(10, -1), counts.reshape(10, -1))]
    assert greedy.mean() >= 475, f"greedy return {greedy.mean():.1f} over {EVAL_ENVS} episodes; training {curve}"
