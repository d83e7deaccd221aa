"""The PPO pieces of the tests that train through an export's own API (tests/test_stoa_ppo.py, tests/test_jumanji_ppo.py):
PureJaxRL's networks (orthogonal tanh MLPs), action sampling, GAE cut at every LAST step, and the clipped loss over
shuffled minibatches. Each test writes its rollout against its target's API; these are the parts that do not touch it."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import optax

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


def networks(actor_key, critic_key, obs_size, actions, hidden=64):
    """The actor's and the critic's layers: ``{"pi": ..., "v": ...}``."""
    return {
        "pi": mlp(actor_key, [obs_size, hidden, hidden, actions], 0.01),
        "v": mlp(critic_key, [obs_size, hidden, hidden, 1], 1.0),
    }


def value(params, obs):
    return forward(params["v"], obs)[..., 0]


def log_prob(logits, action):
    """The log-probability of ``action`` under the categorical distribution of ``logits``."""
    return jnp.take_along_axis(jax.nn.log_softmax(logits), action[..., None], -1)[..., 0]


def sample(params, obs, key):
    """An action of the policy in each row of ``obs``, and its log-probability."""
    logits = forward(params["pi"], obs)
    action = jax.random.categorical(key, logits)
    return action, log_prob(logits, action)


def optimizer(updates, epochs, minibatches, lr=LR):
    """PureJaxRL's: clipped gradients, Adam with the learning rate falling linearly from ``lr`` to 0 over the run."""
    schedule = optax.linear_schedule(lr, 0.0, updates * epochs * minibatches)
    return optax.chain(optax.clip_by_global_norm(0.5), optax.adam(schedule, eps=1e-5))


def advantages(reward, boot, v, last):
    """GAE over time-major rows: ``boot`` is the bootstrap term (``GAMMA * discount * V(observation reached)``), and
    the trace is cut at every LAST step (a new episode follows)."""

    def gae(adv, t):
        delta = t[0] + t[1] - t[2]
        adv = delta + GAMMA * LAMBDA * (1 - t[3]) * adv
        return adv, adv

    return jax.lax.scan(gae, jnp.zeros(reward.shape[1:]), (reward, boot, v, last), reverse=True)[1]


def loss(params, batch):
    obs, action, old_logp, adv, target = batch
    logits = forward(params["pi"], obs)
    logp = log_prob(logits, action)
    ratio, adv = jnp.exp(logp - old_logp), (adv - adv.mean()) / (adv.std() + 1e-8)
    pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - CLIP, 1 + CLIP) * adv).mean()
    entropy = -(jax.nn.softmax(logits) * jax.nn.log_softmax(logits)).sum(-1).mean()
    return pg + VF * ((value(params, obs) - target) ** 2).mean() - ENT * entropy


def learn(tx, params, opt, rollout, key, epochs, minibatches):
    """``epochs`` passes of shuffled minibatches over a time-major ``rollout`` ``(obs, action, logp, v, adv)``;
    the value target is ``adv + v``. Returns ``(params, opt)``."""
    obs, action, logp, v, adv = rollout
    size = v.size
    data = jax.tree.map(lambda x: x.reshape(size, *x.shape[2:]), (obs, action, logp, adv, adv + v))

    def epoch(carry, key):
        order = jax.random.permutation(key, size).reshape(minibatches, -1)

        def minibatch(carry, idx):
            params, opt = carry
            grads = jax.grad(loss)(params, jax.tree.map(lambda x: x[idx], data))
            updates, opt = tx.update(grads, opt)
            return (optax.apply_updates(params, updates), opt), None

        return jax.lax.scan(minibatch, carry, order)[0], None

    return jax.lax.scan(epoch, (params, opt), jax.random.split(key, epochs))[0]
