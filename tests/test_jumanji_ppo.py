"""A PPO written against jumanji's ``Environment`` API only trains the same on ``to_jumanji`` of a jumanji env as on
the raw env, seed for seed: every step of every update, and the trained weights to the bit.

jumanji's ``VmapAutoResetWrapper(next_obs_in_extras=True)`` over ``jumanji.make("Maze-v0", ...)`` and over
``to_jumanji(envhub.make("jumanji/Maze-v0", ...))``; GAE that bootstraps from ``V(extras["next_obs"])`` times the
timestep's ``discount`` (0 where the episode terminated, 1 where it was cut), cutting the trace at every LAST step.
16 envs x 64 steps x 40 updates (41k steps): the policy learns the maze's 10-step path. Each env's rollout is its
own program and the learner one program for both: XLA compiles a learner fused with different env code to results
that differ in the last bit under the suite's flags (``--xla_cpu_use_fusion_emitters=false``, conftest.py).

Why this maze: jumanji's auto-reset wrappers start each new episode from ``split(state.key)[0]``, and ``state.key`` is
the raw env's own key (Snake splits it every step, Maze keeps it) but the export's own chain (folded from the reset
key, split each step: envhub's same-step auto-reset has already replaced the jumanji state the raw env ends in). So
an env whose starts depend on the key (Snake, a random maze) runs as the raw one until each env's first episode end,
and then from other starts drawn the same way. jumanji's toy maze starts the same whatever the key, so the whole run
must match. Its time limit is set far beyond any episode: jumanji ends one there with discount 0, envhub truncates.
"""

from __future__ import annotations

import pytest

optax = pytest.importorskip("optax", reason="the PPO needs optax: pip install -e '.[examples]'")
pytestmark = pytest.mark.requires_plugin("jumanji")

import functools  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from ppo_parts import GAMMA, advantages, forward, learn, log_prob, networks, optimizer, sample, value  # noqa: E402

import envhub  # noqa: E402
from envhub.interop import to_jumanji  # noqa: E402

ENVS, STEPS, UPDATES, EPOCHS, MINIBATCHES, LR = 16, 64, 40, 2, 2, 3e-3
LIMIT, SIDE = 10_000, 5  # the toy maze: 5 x 5, its target 10 steps away


def features(obs):
    """The agent's cell, one-hot (the toy maze and its target never change)."""
    return jax.nn.one_hot(obs.agent_position.row * SIDE + obs.agent_position.col, SIDE * SIDE)


def rollout_of(env):
    """The jitted ``(reset, rollout)`` of a jumanji ``Environment`` under jumanji's ``VmapAutoResetWrapper``:
    ``rollout(params, state, ts, key)`` plays ``STEPS`` steps of the policy in each env."""
    from jumanji.wrappers import VmapAutoResetWrapper

    env = VmapAutoResetWrapper(env, next_obs_in_extras=True)

    def step(params, carry, key):
        state, ts = carry
        obs = features(ts.observation)
        action = sample(params, obs, key)[0]
        state, next_ts = env.step(state, action)
        # extras["next_obs"]: the observation reached, which GAE bootstraps from unless discount is 0 (terminated)
        out = (obs, action, next_ts.reward, next_ts.discount, next_ts.last(), features(next_ts.extras["next_obs"]))
        return (state, next_ts), out

    def rollout(params, state, ts, key):
        return jax.lax.scan(functools.partial(step, params), (state, ts), jax.random.split(key, STEPS))

    return jax.jit(env.reset), jax.jit(rollout)


def learner():
    """The jitted ``update(params, opt, trajectory, key)``: GAE and the PPO epochs, one program for both runs."""
    tx = optimizer(UPDATES, EPOCHS, MINIBATCHES, LR)

    @jax.jit
    def update(params, opt, trajectory, key):
        obs, action, reward, discount, last, reached = trajectory
        logp = log_prob(forward(params["pi"], obs), action)  # the policy that played: these params
        v, boot = value(params, obs), GAMMA * discount * value(params, reached)
        adv = advantages(reward, boot, v, last)
        return learn(tx, params, opt, (obs, action, logp, v, adv), key, EPOCHS, MINIBATCHES)

    return tx, update


def train(env, update, tx, key):
    """PPO on ``env``: every update's trajectory, and the trained weights."""
    reset, rollout = rollout_of(env)
    actor_key, critic_key, env_key, key = jax.random.split(key, 4)
    params = networks(actor_key, critic_key, SIDE * SIDE, int(env.action_spec.num_values))
    opt, (state, ts), trajectories = tx.init(params), reset(jax.random.split(env_key, ENVS)), []
    for rollout_key, learn_key in jax.random.split(key, (UPDATES, 2)):
        (state, ts), trajectory = rollout(params, state, ts, rollout_key)
        params, opt = update(params, opt, trajectory, learn_key)
        trajectories.append(trajectory)
    return jax.device_get((trajectories, params))


def test_a_jumanji_api_ppo_trains_the_same_on_the_export_as_on_the_raw_env():
    import jumanji
    from jumanji.environments.routing.maze.generator import ToyGenerator

    raw = jumanji.make("Maze-v0", generator=ToyGenerator(), time_limit=LIMIT)
    exported = to_jumanji(envhub.make("jumanji/Maze-v0", generator=ToyGenerator(), max_episode_steps=LIMIT))
    tx, update = learner()
    theirs, weights = train(raw, update, tx, jax.random.key(0))
    ours = train(exported, update, tx, jax.random.key(0))
    for update_index, (a, b) in enumerate(zip(theirs, ours[0])):  # every step of every update: the same
        for name, x, y in zip(("obs", "action", "reward", "discount", "last", "reached"), a, b):
            np.testing.assert_array_equal(y, x, err_msg=f"{name} in update {update_index}")
    jax.tree.map(np.testing.assert_array_equal, ours[1], weights)  # and so the same weights, to the bit
    returns, episodes = np.array([[t[2].sum(), t[4].sum()] for t in theirs]).T
    cut = any((t[4] & (t[3] > 0)).any() for t in theirs)
    assert not cut and (returns == episodes).all()  # each episode terminated at the target, its return 1
    assert episodes[:5].sum() < 20 and episodes[-1] >= 90, episodes.tolist()  # at the end, the 10-step path: 102
