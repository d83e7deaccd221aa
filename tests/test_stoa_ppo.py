"""A PPO written against Stoa's API only, as Stoix's ``ff_ppo`` is, solves CartPole on ``envhub.interop.to_stoa``.

Stoix's Anakin stack (``AddRNGKey``, ``RecordEpisodeMetrics``, ``AutoResetWrapper(next_obs_in_extras=True)``,
``VmapWrapper``) over ``to_stoa(envhub.make("gymnax/CartPole-v1"))``; GAE that bootstraps a truncated episode from
``V(extras["next_obs"])`` and a terminated one from nothing (``discount == 0``), cutting the trace at every LAST
step; the returns Stoix logs (``extras["episode_metrics"]`` at terminal steps). One jitted program: 4 envs x 128
steps x 1960 updates (about 1M steps, PureJaxRL's CartPole settings), then the greedy policy plays one episode in
each of 32 envs (seeds 0 to 3 all reach 500 there; at 500k steps one of them stayed near 150)"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("stoa", reason="to_stoa needs stoa-env: pip install 'envhub[stoa]'")
optax = pytest.importorskip("optax", reason="the PPO needs optax: pip install -e '.[examples]'")
pytestmark = pytest.mark.requires_plugin("gymnax")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from stoa import AddRNGKey, AutoResetWrapper, RecordEpisodeMetrics  # noqa: E402
from stoa.core_wrappers.vmap import VmapWrapper  # noqa: E402

import envhub  # noqa: E402
from envhub.interop import to_stoa  # noqa: E402

ENVS, STEPS, UPDATES, EPOCHS, MINIBATCHES = 4, 128, 1960, 4, 4
EVAL_ENVS, LIMIT = 32, 500  # CartPole's time limit: every evaluation episode ends within it
GAMMA, LAMBDA, CLIP, ENT, VF, LR = 0.99, 0.95, 0.2, 0.01, 0.5, 2.5e-4


def mlp(key, sizes, last_scale):
    keys = jax.random.split(key, len(sizes) - 1)
    scales = [math.sqrt(2)] * (len(sizes) - 2) + [last_scale]
    init = jax.nn.initializers.orthogonal
    return [(init(s)(k, (a, b)), jnp.zeros(b)) for k, a, b, s in zip(keys, sizes[:-1], sizes[1:], scales)]


def forward(layers, x):
    for w, b in layers[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = layers[-1]
    return x @ w + b


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
        params = {
            "pi": mlp(actor_key, [obs_size, 64, 64, actions], 0.01),
            "v": mlp(critic_key, [obs_size, 64, 64, 1], 1.0),
        }
        steps_per_update = EPOCHS * MINIBATCHES
        schedule = optax.linear_schedule(LR, 0.0, UPDATES * steps_per_update)
        tx = optax.chain(optax.clip_by_global_norm(0.5), optax.adam(schedule, eps=1e-5))
        value = lambda p, obs: forward(p["v"], obs)[..., 0]  # noqa: E731

        def loss(p, batch):
            obs, action, old_logp, adv, target = batch
            logits = forward(p["pi"], obs)
            logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
            ratio, adv = jnp.exp(logp - old_logp), (adv - adv.mean()) / (adv.std() + 1e-8)
            pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - CLIP, 1 + CLIP) * adv).mean()
            entropy = -(jax.nn.softmax(logits) * jax.nn.log_softmax(logits)).sum(-1).mean()
            return pg + VF * ((value(p, obs) - target) ** 2).mean() - ENT * entropy

        def env_step(carry, key):
            params, state, ts = carry
            logits = forward(params["pi"], ts.observation)
            action = jax.random.categorical(key, logits)
            logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], 1)[:, 0]
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

            def gae(adv, t):  # the trace is cut at every LAST step: a new episode follows
                delta = t[0] + t[1] - t[2]
                adv = delta + GAMMA * LAMBDA * (1 - t[3]) * adv
                return adv, adv

            adv = jax.lax.scan(gae, jnp.zeros(ENVS), (reward, boot, v, last), reverse=True)[1]
            data = jax.tree.map(lambda x: x.reshape(STEPS * ENVS, *x.shape[2:]), (obs, action, logp, adv, adv + v))

            def epoch(carry, key):
                order = jax.random.permutation(key, STEPS * ENVS).reshape(MINIBATCHES, -1)

                def minibatch(carry, idx):
                    params, opt = carry
                    grads = jax.grad(loss)(params, jax.tree.map(lambda x: x[idx], data))
                    updates, opt = tx.update(grads, opt)
                    return (optax.apply_updates(params, updates), opt), None

                return jax.lax.scan(minibatch, carry, order)[0], None

            params, opt = jax.lax.scan(epoch, (params, opt), jax.random.split(key, EPOCHS))[0]
            return (params, opt, state, ts), (jnp.where(ends, returns, 0.0).sum(), ends.sum())

        state, ts = env.reset(env_key)
        carry, curve = jax.lax.scan(update, (params, tx.init(params), state, ts), jax.random.split(key, UPDATES))
        return curve, greedy_returns(carry[0], eval_key)

    return train


def test_a_stoa_api_ppo_solves_cartpole_on_the_export():
    (sums, counts), greedy = jax.device_get(jax.jit(make_train())(jax.random.key(0)))
    curve = [round(float(s.sum() / max(c.sum(), 1))) for s, c in zip(sums.reshape(10, -1), counts.reshape(10, -1))]
    assert greedy.mean() >= 475, f"greedy return {greedy.mean():.1f} over {EVAL_ENVS} episodes; training {curve}"
