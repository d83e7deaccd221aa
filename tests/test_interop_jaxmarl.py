"""``envhub.interop.to_jaxmarl``: JaxMARL's ``MultiAgentEnv`` API over multi-agent envhub envs (spaces, same-step
auto-reset with the observations reached, terminated vs truncated, avail actions from legal masks, JaxMARL's
LogWrapper, equality with envhub's own rollout, refusals with envhub's errors)."""

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub import spaces
from envhub.errors import ActionError, ClosedEnvironmentError, InvalidArgumentError, MissingDependencyError
from envhub.interop import to_jaxmarl
from envhub.testing.toy_envs import Corridor

SPREAD = "jaxmarl/MPE_simple_spread_v3"
needs_jaxmarl = pytest.mark.requires_plugin("jaxmarl")
needs_pgx = pytest.mark.requires_plugin("jaxmarl", "pgx")  # the export itself needs the jaxmarl library


def random_actions(env, key):
    """One uniformly random action per agent of a JaxMARL env (its Discrete action spaces)."""
    keys = jax.random.split(key, env.num_agents)
    return {a: env.action_space(a).sample(k) for a, k in zip(env.agents, keys)}


@needs_jaxmarl
def test_spaces_reset_step_and_truncation_on_mpe():
    from jaxmarl.environments import spaces as jspaces
    from jaxmarl.environments.multi_agent_env import MultiAgentEnv

    env = to_jaxmarl(envhub.make(SPREAD))
    assert isinstance(env, MultiAgentEnv) and env.agents == ["agent_0", "agent_1", "agent_2"] and env.num_agents == 3
    box, act = env.observation_space("agent_1"), env.action_space("agent_1")
    assert isinstance(box, jspaces.Box) and box.shape == (18,) and isinstance(act, jspaces.Discrete) and act.n == 5

    def run(key):
        obs, state = env.reset(key)

        def body(state, key):
            action_key, step_key = jax.random.split(key)
            obs, state, rewards, dones, infos = env.step(step_key, state, random_actions(env, action_key))
            return state, (obs, rewards, dones, infos, state.final_observation)

        return obs, jax.lax.scan(body, state, jax.random.split(key, 30))[1]

    first, (obs, rewards, dones, infos, reached) = jax.jit(run)(jax.random.key(0))
    assert first["agent_0"].shape == (18,) and obs["agent_2"].shape == (30, 18) and rewards["agent_0"].shape == (30,)
    assert set(dones) == {*env.agents, "__all__"} and infos["truncated"].shape == (30, 3)
    ends = np.flatnonzero(dones["__all__"])
    assert ends.tolist() == [25]  # 26 steps, as jaxmarl's own env (done once its step count reaches max_steps=25)
    assert infos["truncated"][25].all() and not infos["terminated"].any()  # a time limit: truncated, never terminated
    assert all(bool(dones[a][25]) for a in env.agents) and not any(dones[a][:25].any() for a in env.agents)
    assert set(infos) == {"terminated", "truncated"}  # one value per agent in every leaf: baselines reshape them
    final, after = reached["agent_0"], obs["agent_0"]  # the observations reached live in the state
    assert np.array_equal(final[:25], after[:25]) and not np.array_equal(final[25], after[25])  # reset in the same step
    avail = env.get_avail_actions(env.reset(jax.random.key(1))[1])  # MPE has no masks: every action, every agent
    assert list(avail) == env.agents and all(np.array_equal(m, np.ones(5, bool)) for m in avail.values())


@needs_jaxmarl
def test_scan_over_the_export_equals_envhub_rollout():
    base = envhub.make(SPREAD)
    env = to_jaxmarl(base)

    def exported(key):
        obs, state = env.reset(key)

        def body(state, key):
            action_key, step_key = jax.random.split(key)
            obs, state, rewards, dones, infos = env.step(step_key, state, random_actions(env, action_key))
            return state, (obs, rewards, dones["__all__"], state.final_observation)

        return obs, jax.lax.scan(body, state, jax.random.split(key, 40))[1]

    def own(key):
        state, ts = base.init(key)

        def body(state, key):
            action_key, step_key = jax.random.split(key)
            state, ts = base.step(step_key, state, random_actions(env, action_key))
            return state, (ts.obs, ts.reward, ts.done, ts.final_obs)

        return ts.obs, jax.lax.scan(body, state, jax.random.split(key, 40))[1]

    key = jax.random.key(3)
    got, want = jax.jit(exported)(key), jax.jit(own)(key)
    assert jax.tree.structure(got) == jax.tree.structure(want)
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want)))


@needs_jaxmarl
def test_jaxmarl_log_wrapper_runs_over_the_export_under_jit():
    from jaxmarl.wrappers.baselines import LogWrapper

    env = LogWrapper(to_jaxmarl(envhub.make(SPREAD)))

    @jax.jit
    def run(key):
        _, state = jax.vmap(env.reset)(jax.random.split(key, 4))

        def body(state, key):
            action_key, step_key = jax.random.split(key)
            actions = jax.vmap(lambda k: random_actions(env, k))(jax.random.split(action_key, 4))
            _, state, _, _, info = jax.vmap(env.step)(jax.random.split(step_key, 4), state, actions)
            return state, info

        return jax.lax.scan(body, state, jax.random.split(key, 27))[1]

    info = run(jax.random.key(0))
    per_actor = jax.tree.map(lambda x: x.reshape((27, 12)), info)  # ippo_ff_mpe.py: one value per agent of each env
    assert set(per_actor) >= {"terminated", "truncated", "returned_episode"}  # the export's defaults, no flag
    assert info["returned_episode"].shape == (27, 4, 3) and info["returned_episode"][25].all()
    assert not info["returned_episode"][:25].any() and (info["returned_episode_lengths"][25] == 26).all()
    assert (info["returned_episode_returns"][25] < 0).all() and info["truncated"][25].all()  # MPE: negative distances


@needs_jaxmarl
def test_jaxmarl_baselines_discrete_actions_of_shape_one_are_taken():
    env = to_jaxmarl(envhub.make(SPREAD))
    _, state = env.reset(jax.random.key(0))
    step = jax.jit(env.step)
    scalar = step(jax.random.key(1), state, {a: jnp.int32(i + 1) for i, a in enumerate(env.agents)})
    trailing = step(jax.random.key(1), state, {a: jnp.array([i + 1], jnp.int32) for i, a in enumerate(env.agents)})
    assert all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(scalar), jax.tree.leaves(trailing)))


@needs_pgx
def test_pgx_game_avail_actions_turns_termination_and_reset():
    from jaxmarl.environments import spaces as jspaces

    env = to_jaxmarl(envhub.make("pgx/tic_tac_toe"))
    assert env.agents == ["player_0", "player_1"] and env.turn_based
    box = env.observation_space("player_1")
    assert isinstance(box, jspaces.Box) and box.shape == (3, 3, 2) and env.action_space("player_0").n == 9
    obs, state = env.reset(jax.random.key(0))
    first = int(state.current_player)
    mover, other = env.agents[first], env.agents[1 - first]
    step = jax.jit(env.step)
    for i, move in enumerate([0, 3, 1, 4, 2]):  # the first mover gets three in a row on its third move
        avail = env.get_avail_actions(state)
        legal = np.ones(9, bool)
        legal[[0, 3, 1, 4, 2][:i]] = False
        assert np.array_equal(avail[env.agents[int(state.current_player)]], legal)  # the legal moves, the mover's
        assert avail[env.agents[1 - int(state.current_player)]].all()  # the other's action is ignored
        obs, state, rewards, dones, infos = step(jax.random.key(i), state, {a: jnp.int32(move) for a in env.agents})
    assert dones["__all__"] and dones[mover] and dones[other] and infos["terminated"].all()
    assert not infos["truncated"].any() and (float(rewards[mover]), float(rewards[other])) == (1.0, -1.0)
    assert int(state.final_observation[mover].sum()) == 5 and int(obs[mover].sum()) == 0  # reset in the same step
    assert all(x.all() for x in env.get_avail_actions(state).values())  # a new game: every move legal


@needs_pgx
def test_pgx_scan_over_the_export_equals_envhub_rollout():
    base = envhub.make("pgx/tic_tac_toe")
    env = to_jaxmarl(base)

    def legal_move(key, mask):
        return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)

    def exported(key):
        _, state = env.reset(key)

        def body(state, key):
            action_key, step_key = jax.random.split(key)
            avail = env.get_avail_actions(state)
            actions = {a: legal_move(action_key, avail[a]) for a in env.agents}
            _, state, rewards, dones, _ = env.step(step_key, state, actions)
            return state, (actions[env.agents[0]], rewards, dones["__all__"])

        return jax.lax.scan(body, state, jax.random.split(key, 30))[1]

    def own(key):
        state, ts = base.init(key)

        def body(carry, key):
            state, obs = carry
            action_key, step_key = jax.random.split(key)
            state, ts = base.step(step_key, state, legal_move(action_key, obs["legal_action_mask"]))
            return (state, ts.obs), (ts.reward, ts.done)

        return jax.lax.scan(body, (state, ts.obs), jax.random.split(key, 30))[1]

    key = jax.random.key(5)
    (_, rewards, done), (want_rewards, want_done) = jax.jit(exported)(key), jax.jit(own)(key)
    assert np.array_equal(done, want_done) and done.sum() >= 2
    assert all(np.array_equal(rewards[a], want_rewards[a]) for a in env.agents)


@needs_pgx
def test_bad_actions_get_env_step_errors():
    mpe, game = to_jaxmarl(envhub.make(SPREAD)), to_jaxmarl(envhub.make("pgx/tic_tac_toe"))
    key, (_, state), (_, game_state) = jax.random.key(0), mpe.reset(jax.random.key(0)), game.reset(jax.random.key(0))
    ok = {a: jnp.int32(0) for a in mpe.agents}
    with pytest.raises(ActionError, match=r"no action for \['agent_2'\]"):
        mpe.step(key, state, {"agent_0": 0, "agent_1": 0})
    with pytest.raises(ActionError, match=r"unknown keys \['agent_9'\]"):
        mpe.step(key, state, {**ok, "agent_9": 0})
    with pytest.raises(ActionError, match=r"at action\['agent_1'\]: shape \(2,\) where \(\) is needed"):
        mpe.step(key, state, {**ok, "agent_1": jnp.zeros(2, jnp.int32)})
    with pytest.raises(ActionError, match=r"7 .*is outside \[0, 5\)"):
        mpe.step(key, state, {**ok, "agent_0": jnp.int32(7)})
    with pytest.raises(ActionError, match=r"no action for \['player_1'\]"):
        game.step(key, game_state, {"player_0": 0})
    with pytest.raises(InvalidArgumentError, match="reset_state=.*call step"):
        mpe.step(key, state, ok, state)
    with pytest.raises(NotImplementedError, match="auto-resets inside step"):
        mpe.step_env(key, state, ok)


@needs_pgx
def test_refusals_name_the_fix():
    with pytest.raises(InvalidArgumentError, match="single-agent.*use envhub.interop.to_gymnax"):
        to_jaxmarl(Corridor())
    with pytest.raises(InvalidArgumentError, match="make it without num_envs.*vmaps env.reset and env.step itself"):
        to_jaxmarl(envhub.make(SPREAD, num_envs=2))
    with pytest.raises(InvalidArgumentError, match="current_player.*flatten only obs\\['observation'\\]"):
        to_jaxmarl(envhub.wrappers.FlattenObservation(envhub.make("pgx/tic_tac_toe")))
    base = envhub.make(SPREAD)
    env = to_jaxmarl(base)
    _, state = env.reset(jax.random.key(0))
    base.close()
    with pytest.raises(ClosedEnvironmentError, match=r"after close\(\)"):
        env.step(jax.random.key(1), state, {a: 0 for a in env.agents})
    with pytest.raises(ClosedEnvironmentError, match=r"after close\(\)"):
        env.reset(jax.random.key(1))


@needs_jaxmarl
def test_spaces_convert_and_others_refuse():
    from jaxmarl.environments import spaces as jspaces

    from envhub.interop.jaxmarl_export import to_jaxmarl_space

    tree = to_jaxmarl_space(
        spaces.Tree({"a": spaces.Discrete(3), "b": (spaces.Box(0, 1, (2,)), spaces.MultiDiscrete([2, 3]))})
    )
    assert isinstance(tree, jspaces.Dict) and isinstance(tree.spaces["b"], jspaces.Tuple)
    assert tree.spaces["b"].spaces[1].num_categories.tolist() == [2, 3]
    shifted = to_jaxmarl_space(spaces.Discrete(3, start=-1))  # not from 0: an int Box with inclusive bounds
    assert isinstance(shifted, jspaces.Box) and (int(shifted.low), int(shifted.high)) == (-1, 1)


@needs_jaxmarl
def test_import_envhub_interop_does_not_import_jaxmarl():
    code = "import sys, envhub.interop; print('jaxmarl' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"


@needs_jaxmarl
def test_missing_jaxmarl_raises_the_install_line(monkeypatch):
    monkeypatch.delitem(sys.modules, "envhub.interop.jaxmarl_export", raising=False)
    monkeypatch.setitem(sys.modules, "jaxmarl.environments", None)
    with pytest.raises(MissingDependencyError, match=r"needs the Python package 'jaxmarl'.*envhub\[jaxmarl\]"):
        envhub.interop.to_jaxmarl(envhub.make(SPREAD))  # looked up again: the function of the module imported afresh


@needs_jaxmarl
def test_bad_arguments_and_states_are_refused_naming_the_fix():
    with pytest.raises(InvalidArgumentError, match=r"takes an envhub Environment, not a str .*envhub.make\('jaxmarl/"):
        to_jaxmarl(SPREAD)
    base = envhub.make(SPREAD)
    with pytest.raises(InvalidArgumentError, match=r"to_jaxmarl\(keep_final_obs='no'\): give True .* or False"):
        to_jaxmarl(base, keep_final_obs="no")
    env = to_jaxmarl(base, keep_final_obs=np.bool_(False))
    assert env.keep_final_obs is False
    key, (obs, state) = jax.random.key(0), env.reset(jax.random.key(0))
    actions = {a: jnp.int32(0) for a in env.agents}
    for wrong, kind in ((state.env_state, "JaxState"), (obs, "dict")):
        with pytest.raises(
            InvalidArgumentError, match=rf"was given a {kind} as its state, not the EnvhubMultiAgentState"
        ):
            env.step(key, wrong, actions)
    assert set(env.step(key, state, actions)[0]) == set(env.agents)  # the state passed in still steps
