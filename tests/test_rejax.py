"""rejax 0.1.3 trains on envhub envs through ``to_gymnax(env, step_returns=5)`` (tiny budgets, one evaluation).

- gymnax CartPole: PPO, DQN and SAC each run a few thousand steps; PPO also trains on two gravities in one
  compiled program (``jax.vmap`` over the export's params).
- brax inverted_pendulum (continuous actions; brax's spring pipeline): PPO. Not DQN: rejax's DQN needs a ``Discrete`` action space (it
  reads ``action_space.n``). SAC ran here too (7 s, the suite's budget): it reaches the export through the same
  continuous-action path as PPO (the squeezed ``Box((1,))`` action of rejax's evaluation), and SAC itself runs
  on CartPole above.
- xminigrid MiniGrid-Empty-5x5 (a uint8 ``(7, 7, 2)`` grid observation, 6 discrete actions): PPO (DQN, which
  worked too, runs on CartPole above).

The returns are the rejax evaluation's. On brax and xminigrid the env's own time limit is short and rejax's
evaluation cap (``params.max_steps_in_episode``) is raised far above it, so every evaluated episode ends by the
env's termination or truncation reaching rejax as ``done``.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub.interop import to_gymnax

rejax = pytest.importorskip("rejax", reason="needs rejax 0.1.3 (the test extra)")
pytestmark = pytest.mark.requires_plugin("gymnax")

STEPS = 2048
ONE_EVAL = {"eval_freq": STEPS, "skip_initial_evaluation": True}  # one evaluation, at the end
SMALL = {"agent_kwargs": {"hidden_layer_sizes": (16, 16)}}
BUFFER = {"num_envs": 1, "buffer_size": 1024, "fill_buffer": 256, "batch_size": 32}
CONFIGS = {  # rejax fixes DQN's net at (64, 64)
    "PPO": {"num_envs": 4, "num_steps": 32, "num_epochs": 1, "num_minibatches": 2, **SMALL},
    "DQN": BUFFER,
    "SAC": {**BUFFER, "hidden_layer_sizes": (16, 16)},
}


@pytest.fixture(scope="module")
def cartpole():
    return to_gymnax(envhub.make("gymnax/CartPole-v1"), step_returns=5)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_rejax_trains_on_the_export(cartpole, name):
    env, params = cartpole
    algo = getattr(rejax, name).create(env=env, env_params=params, total_timesteps=STEPS, **ONE_EVAL, **CONFIGS[name])
    state, (lengths, returns) = jax.jit(algo.train)(jax.random.key(0))
    assert int(state.global_step) == STEPS
    assert returns.shape == (1, 128) and np.isfinite(returns).all() and (returns >= 1).all()  # CartPole: +1 a step
    np.testing.assert_array_equal(returns, lengths)


def test_rejax_ppo_vmaps_over_envhub_params(cartpole):
    env, params = cartpole
    algo = rejax.PPO.create(env=env, env_params=params, total_timesteps=STEPS, **ONE_EVAL, **CONFIGS["PPO"])
    heavy = params.replace(env_params=params.env_params.replace(gravity=jnp.float32(30.0)))
    gravities = jax.tree.map(lambda a, b: jnp.stack([a, b]), params, heavy)

    @jax.jit
    @jax.vmap
    def train(env_params):  # one program: PPO on each gravity, the same seed
        return algo.replace(env_params=env_params).train(jax.random.key(0))

    state, (lengths, returns) = train(gravities)
    assert state.global_step.tolist() == [STEPS, STEPS] and np.isfinite(returns).all()
    actor = jax.tree.leaves(state.actor_ts.params)[0]
    assert actor.shape[0] == 2 and not np.allclose(actor[0], actor[1])  # each row trained on its own dynamics


SHORT = 512  # brax and xminigrid: a few updates; the compile (each env's step, in training and in evaluation) dominates
SHORT_EVAL = {"eval_freq": SHORT, "skip_initial_evaluation": True}
SHORT_CONFIGS = {
    "PPO": {"num_envs": 2, "num_steps": 16, "num_epochs": 1, "num_minibatches": 1, **SMALL},
}
TRAINED = {"PPO": "actor_ts"}  # the train state's policy


def with_own_limit(env_id, limit, **kwargs):
    """The export of ``env_id`` with the time limit ``limit``, and params whose rejax cap is 10x that limit."""
    env, params = to_gymnax(envhub.make(env_id, max_episode_steps=limit, **kwargs), step_returns=5)
    assert params.max_steps_in_episode == limit  # what rejax reads: the env's limit
    return env, params.replace(time_limit=10 * limit)  # evaluation then stops only at the env's done


def train_short(name, env, params):
    """rejax ``name`` for ``SHORT`` steps on the export: the initial and final train states, the evaluation."""
    algo = getattr(rejax, name).create(
        env=env, env_params=params, total_timesteps=SHORT, **SHORT_EVAL, **SHORT_CONFIGS[name]
    )
    before = algo.init_state(jax.random.key(0))
    after, (lengths, returns) = jax.jit(algo.train)(train_state=before)
    assert int(after.global_step) == SHORT
    assert returns.shape == lengths.shape == (1, 128) and np.isfinite(returns).all()
    old, new = (jax.tree.leaves(getattr(ts, TRAINED[name]).params) for ts in (before, after))
    assert any(not np.allclose(a, b) for a, b in zip(old, new, strict=True))  # the policy was trained
    return np.asarray(lengths), np.asarray(returns)


PENDULUM_LIMIT = 10  # short enough that some evaluated episodes reach it, others end with the pole down


@pytest.fixture(scope="module")
def pendulum():
    # brax's spring pipeline: rejax traces the env's step for training and for evaluation, and jitting its
    # train took 5.8 s with the default (generalized) pipeline, 2.9 s with spring (warm compile cache); the
    # export's path is the same. The pole falls more slowly there: a 10-step limit still sees both ends.
    return with_own_limit("brax/inverted_pendulum", PENDULUM_LIMIT, backend="spring")


@pytest.mark.requires_plugin("brax")
@pytest.mark.parametrize("name", ["PPO"])
def test_rejax_trains_on_brax_inverted_pendulum(pendulum, name):
    lengths, returns = train_short(name, *pendulum)
    np.testing.assert_array_equal(returns, lengths)  # inverted_pendulum: +1 a step
    assert lengths.max() == PENDULUM_LIMIT  # truncation by the env's limit reaches rejax as done
    assert lengths.min() < PENDULUM_LIMIT  # and so does termination (the pole fell)


GRID_LIMIT = 16


@pytest.fixture(scope="module")
def minigrid():
    return with_own_limit("xminigrid/MiniGrid-Empty-5x5", GRID_LIMIT)


@pytest.mark.requires_plugin("xminigrid")
@pytest.mark.parametrize("name", ["PPO"])
def test_rejax_trains_on_xminigrid_empty(minigrid, name):
    env, params = minigrid
    obs = env.observation_space(params)
    assert (obs.shape, obs.dtype, env.action_space(params).n) == ((7, 7, 2), np.uint8, 6)  # rejax's nets flatten it
    lengths, returns = train_short(name, env, params)
    assert (lengths <= GRID_LIMIT).all() and (returns >= 0).all() and (returns <= 1).all()
    np.testing.assert_array_equal(returns > 0, lengths < GRID_LIMIT)  # the goal reached early (terminated) pays
