"""rejax 0.1.3 trains on ``to_gymnax(envhub.make("gymnax/CartPole-v1"), step_returns=5)`` (tiny budgets).

PPO, DQN and SAC each run a few thousand steps; PPO also trains on two gravities in one compiled
program (``jax.vmap`` over the export's params). The returns are the rejax evaluation's.
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
