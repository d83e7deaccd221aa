"""``envhub.interop.to_jaxmarl`` on SMAX as JaxMARL's own SMAX baselines read it (``baselines/IPPO/ippo_rnn_smax.py``,
``baselines/MAPPO/mappo_rnn_smax.py``): every info leaf reshapes to one value per actor, the global state is
``obs["world_state"]`` and the attributes MAPPO's ``SMAXWorldStateWrapper`` reads are there. Shapes only (traced,
not compiled): the baselines themselves were run by hand on the export (docs/multi-agent.md)."""

import jax
import jax.numpy as jnp
import pytest

import envhub
from envhub.interop import to_jaxmarl

pytestmark = pytest.mark.requires_plugin("jaxmarl")


def test_smax_infos_reshape_per_actor_and_the_world_state_is_where_jaxmarls_mappo_reads_it():
    from jaxmarl.environments.smax import HeuristicEnemySMAX, map_name_to_scenario
    from jaxmarl.wrappers.baselines import SMAXLogWrapper

    scenario = map_name_to_scenario("3m")
    raw = HeuristicEnemySMAX(scenario=scenario)
    exported = to_jaxmarl(envhub.make("jaxmarl/HeuristicEnemySMAX", scenario=scenario), keep_final_obs=False)
    assert (exported.state_size, exported.num_allies) == (raw.state_size, raw.num_allies) == (72, 3)
    env = SMAXLogWrapper(exported)

    def step(keys):  # 2 envs, as the baselines vmap them; then ippo_rnn_smax.py's reshape (NUM_ACTORS = 2 * 3)
        obs, state = jax.vmap(env.reset)(keys)
        actions = {a: jnp.zeros((2,), jnp.int32) for a in env.agents}
        obs, _, _, _, info = jax.vmap(env.step)(keys, state, actions)
        return obs, info, jax.tree.map(lambda x: x.reshape((2 * 3)), info)

    keys = jax.random.split(jax.random.key(0), 2)
    obs, info, per_actor = jax.eval_shape(step, keys)
    logged = {f"returned_{x}" for x in ("episode_returns", "episode_lengths", "won_episode", "episode")}
    assert set(info) == {"won_episode", "terminated", "truncated", *logged}  # the global state is no info entry
    assert all(x.shape == (2, 3) for x in info.values()) and all(x.shape == (6,) for x in per_actor.values())
    assert (obs["world_state"].shape, obs["ally_0"].shape) == ((2, 72), (2, raw.observation_space("ally_0").shape[0]))
    raw_obs = jax.eval_shape(jax.vmap(raw.reset), keys)[0]  # jaxmarl's own SMAX: the same observation keys
    assert set(obs) == set(raw_obs) and raw_obs["world_state"].shape == (2, 72)
