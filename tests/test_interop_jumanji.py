"""``envhub.interop.to_jumanji``: jumanji's ``Environment`` API over JAX-native envhub envs (specs from the spaces,
a raw env's LAST step with the observation reached, terminated vs truncated discounts, jumanji's own auto-reset
wrappers on it, a jumanji env matching the raw one seed for seed, Mava's multi-agent layout, refusals).

Cheap on purpose: a toy env (Corridor) for the wrappers, one compiled program per test at most."""

import dataclasses
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub import spaces
from envhub.errors import ActionError, ClosedEnvironmentError, InvalidArgumentError
from envhub.interop.jumanji_export import EnvhubJumanjiState, to_jumanji
from envhub.testing.toy_envs import Corridor
from envhub.wrappers import DropFinalObs

pytestmark = pytest.mark.requires_plugin("jumanji")
KEY = jax.random.key(0)
SPREAD, GAME = "jaxmarl/MPE_simple_spread_v3", "pgx/tic_tac_toe"


def test_specs_match_the_spaces():
    from jumanji import specs
    from jumanji.env import Environment
    from jumanji.testing.env_not_smoke import check_env_specs_does_not_smoke

    from envhub.interop.jumanji_specs import MappingSpec, TupleSpec, to_jumanji_spec

    env = to_jumanji(envhub.make("jumanji/Snake-v1"))
    assert isinstance(env, Environment)
    space, spec = env.env.observation_space, env.observation_spec
    for name, leaf in space.spaces._asdict().items():
        field = getattr(spec, name)
        assert (field.shape, field.dtype) == (leaf.shape, leaf.dtype)
    assert isinstance(spec.step_count, specs.DiscreteArray) and spec.step_count.num_values == 4001
    assert float(spec.grid.maximum.max()) == 1.0 and isinstance(env.action_spec, specs.DiscreteArray)
    assert env.time_limit == 4000  # as the raw Snake's (Mava's jumanji wrappers read it)
    assert (env.reward_spec.shape, env.discount_spec.shape, env.reward_spec.dtype) == ((), (), np.float32)
    check_env_specs_does_not_smoke(env)  # jumanji.testing's

    tree = spaces.Tree(
        {
            "a": spaces.Discrete(3, dtype=np.uint8),
            "b": (spaces.Box(-np.inf, np.inf, (2,)), spaces.MultiDiscrete([[2, 3], [4, 5]])),
            "c": spaces.Discrete(3, start=-1),  # not from 0: an integer BoundedArray with its inclusive bounds
        }
    )
    out = to_jumanji_spec(tree)
    assert isinstance(out, MappingSpec) and isinstance(out.b, TupleSpec) and out.a.dtype == np.uint8
    assert type(out["b"]["0"]) is specs.Array and isinstance(out["b"]["1"], specs.MultiDiscreteArray)
    assert out["b"]["1"].num_values.tolist() == [[2, 3], [4, 5]] and (int(out.c.minimum), int(out.c.maximum)) == (-1, 1)
    value = tree.sample(KEY)
    assert jax.tree.structure(out.validate(value)) == jax.tree.structure(value)  # a dict and a tuple validate
    assert jax.tree.structure(out.generate_value()) == jax.tree.structure(value)
    with pytest.raises(ValueError, match=r"is not a dict with the keys \['a', 'b', 'c'\]"):
        out.validate((1, 2))


def corridor_runs(env, exported, key):
    """jumanji's VmapAutoResetWrapper (2 envs: one walks right and terminates, one stays and is truncated) and
    AutoResetWrapper (the first env's walk), scanned; and envhub's own rollout of the same envs from the same keys."""
    from jumanji.wrappers import AutoResetWrapper, VmapAutoResetWrapper

    actions, keys = jnp.array([1, 0]), jax.random.split(key, 2)

    def scan(wrapped, action, keys):
        first = wrapped.reset(keys)
        return first[1], jax.lax.scan(lambda s, _: wrapped.step(s, action), first[0], None, 8)[1]

    vmapped = scan(VmapAutoResetWrapper(exported, next_obs_in_extras=True), actions, keys)
    single = scan(AutoResetWrapper(exported, next_obs_in_extras=True), actions[0], keys[0])
    states = jax.vmap(env.init)(keys)[0]
    step = jax.vmap(env.step)
    own = jax.lax.scan(lambda s, k: step(jax.random.split(k, 2), s, actions), states, jax.random.split(key, 8))[1]
    return vmapped, single, own


def test_jumanjis_auto_reset_wrappers_run_on_it_under_jit_and_scan_keeping_terminated_and_truncated_apart():
    env = Corridor(length=4, max_steps=6)
    exported = to_jumanji(env)  # built outside jit, as jumanji's envs are (their specs are made of arrays)
    (first, ts), (single_first, single), own = jax.jit(lambda k: corridor_runs(env, exported, k))(KEY)
    assert first.step_type.tolist() == [0, 0] and first.discount.tolist() == [1.0, 1.0]
    steps = np.asarray(ts.step_type)
    end = [int(np.argmax(steps[:, i] == 2)) for i in range(2)]  # each env's first LAST
    assert steps[end[1], 1] == 2 and end[1] == 5  # the one that stays: cut by the time limit at step 6
    assert float(ts.discount[end[0], 0]) == 0.0 and float(ts.discount[end[1], 1]) == 1.0  # terminated vs truncated
    assert bool(own.terminated[end[0], 0]) and bool(own.truncated[end[1], 1])
    for i in range(2):  # envhub's observations before the end, and the observation reached at it
        np.testing.assert_array_equal(ts.observation[: end[i], i], own.obs[: end[i], i])
        np.testing.assert_array_equal(ts.extras["next_obs"][end[i], i], own.final_obs[end[i], i])
        np.testing.assert_array_equal(ts.reward[: end[i] + 1, i], own.reward[: end[i] + 1, i])
    assert float(ts.extras["next_obs"][end[0], 0, 0]) == 4.0 and float(ts.observation[end[0], 0, 0]) < 2.0  # reset
    assert int(ts.step_type[end[0] + 1, 0]) == 1  # then the next episode goes on: MID
    assert ts.extras.keys() == {"moved", "next_obs"}  # the env's info, and the wrapper's entry
    np.testing.assert_array_equal(single.step_type, ts.step_type[:, 0])  # the same walk through AutoResetWrapper
    np.testing.assert_array_equal(single.extras["next_obs"], ts.extras["next_obs"][:, 0])


def test_a_jumanji_env_through_envhub_matches_the_raw_env_seed_for_seed_across_episodes():
    import jumanji
    from jumanji.wrappers import VmapAutoResetWrapper

    raw = jumanji.make("Snake-v1", num_rows=5, num_cols=5)
    exported = to_jumanji(envhub.make("jumanji/Snake-v1", num_rows=5, num_cols=5))

    def run(env, key):  # jumanji's auto-reset restarts each episode from the state's key: the raw env's, on both
        env = VmapAutoResetWrapper(env, next_obs_in_extras=True)
        state, first = env.reset(jax.random.split(key, 4))
        actions = jax.random.randint(jax.random.fold_in(key, 1), (30, 4), 0, 4)
        return first, jax.lax.scan(env.step, state, actions)[1]

    theirs, ours = jax.jit(lambda k: (run(raw, k), run(exported, k)))(jax.random.key(0))
    ends = (np.asarray(theirs[1].step_type) == 2).sum(0)
    assert ends.min() >= 1 and ends.max() >= 3  # several episodes, each restarted by the wrapper
    jax.tree.map(np.testing.assert_array_equal, theirs[0].observation, ours[0].observation)
    pairs = [(getattr(theirs[1], f), getattr(ours[1], f)) for f in ("step_type", "reward", "discount", "observation")]
    for a, b in [*pairs, (theirs[1].extras["next_obs"], ours[1].extras["next_obs"])]:
        jax.tree.map(np.testing.assert_array_equal, a, b)


@pytest.mark.requires_plugin("jaxmarl")
def test_a_simultaneous_env_in_mavas_layout_is_truncated_with_discount_one():
    from envhub.interop.jumanji_specs import ObservationGlobalState

    base = envhub.make(SPREAD)
    env = to_jumanji(base, add_global_state=True)
    assert (env.num_agents, env.action_dim, env.time_limit, env.agents) == (
        3,
        5,
        base.metadata["time_limit"],
        list(base.agents),
    )
    state, ts = env.reset(KEY)
    own = base.init(KEY)[1].obs
    np.testing.assert_array_equal(ts.observation.agents_view, np.stack([own[a] for a in base.agents]))
    assert isinstance(ts.observation, ObservationGlobalState) and ts.observation.global_state.shape == (3, 54)
    np.testing.assert_array_equal(ts.observation.global_state[2], np.concatenate([own[a] for a in base.agents]))
    assert bool(ts.observation.action_mask.all()) and ts.observation.action_mask.shape == (3, 5)  # no masks: all ones
    actions = env.action_spec.validate(jnp.array([0, 1, 2]))
    step, types = jax.jit(env.step), []
    while not types or types[-1] == 1:  # an episode, as jumanji.testing's check_env_does_not_smoke runs one
        state, last = step(state, actions)
        types.append(int(last.step_type))
    env.observation_spec.validate(last.observation)  # as jumanji.testing's check_env_does_not_smoke does
    assert types == [1] * (env.time_limit - 1) + [2] and last.reward.shape == (3,)
    assert int(last.observation.step_count[0]) == env.time_limit
    assert last.discount.tolist() == [1.0, 1.0, 1.0] and last.extras == {"env_metrics": {}}  # cut by the time limit
    with pytest.raises(
        InvalidArgumentError, match=r"have different observation spaces .* one axis; use envhub.interop.to_jaxmarl"
    ):
        to_jumanji(envhub.make("jaxmarl/MPE_simple_adversary_v3"))  # an adversary sees less than the agents


@pytest.mark.requires_plugin("jaxmarl")
def test_smax_in_mavas_layout_says_won_episode_where_mava_reads_it_by_mavas_rule():
    """Mava 57c8e64's evaluator reads ``extras["won_episode"]`` (``log_win_rate``, SMAX's default), a newer Mava
    ``extras["env_metrics"]["won_episode"]``: one bool per step, False at reset, and on an unfinished, a won and a lost
    step (3m, one side wiped out before it) what Mava's ``SmaxWrapper`` gives from the same step's rewards."""
    from jaxmarl.environments.smax import map_name_to_scenario
    from jumanji.types import StepType

    env = to_jumanji(envhub.make("jaxmarl/HeuristicEnemySMAX", scenario=map_name_to_scenario("3m")))
    state, first = env.reset(KEY)
    assert first.extras["won_episode"].shape == () and first.extras["won_episode"].dtype == jnp.bool_
    assert not first.extras["won_episode"] and not first.extras["env_metrics"]["won_episode"]
    outer = state.env_state.env  # HeuristicEnemySMAX's state, SMAX's inside

    def wiped_out(enemies):
        side = (jnp.arange(6) >= 3) == enemies  # 3m: units 0-2 the allies (the agents), 3-5 the enemies
        smax = outer.state.replace(unit_health=jnp.where(side, 0.0, outer.state.unit_health))
        smax = smax.replace(unit_alive=outer.state.unit_alive & ~side)
        return dataclasses.replace(state, env_state=dataclasses.replace(state.env_state, env=outer.replace(state=smax)))

    states = jax.tree.map(lambda *xs: jnp.stack(xs), state, wiped_out(True), wiped_out(False))
    _, ts = jax.jit(jax.vmap(env.step))(states, jnp.zeros((3, 3), jnp.int32))
    mava = (ts.step_type == StepType.LAST) & jnp.all(ts.reward >= 1.0, axis=1)  # mava/wrappers/jaxmarl.py, SmaxWrapper
    assert ts.step_type.tolist() == [StepType.MID, StepType.LAST, StepType.LAST]
    assert ts.extras["won_episode"].tolist() == mava.tolist() == [False, True, False]
    assert ts.extras["env_metrics"]["won_episode"].tolist() == [False, True, False]


@pytest.mark.requires_plugin("pgx")
def test_a_turn_based_game_in_mavas_layout_checks_every_agents_action():
    from jumanji.testing.env_not_smoke import check_env_does_not_smoke

    env = to_jumanji(envhub.make(GAME))
    check_env_does_not_smoke(env)  # jumanji.testing's: random actions (illegal ones end the game), specs validated
    state, ts = env.reset(KEY)
    mover = int(state.current_player)
    assert ts.observation.action_mask.shape == (2, 9) and bool(ts.observation.action_mask.all())  # an empty board
    assert (ts.observation.agents_view[0] == ts.observation.agents_view[1]).all()  # every agent sees the mover's view
    action = np.zeros(2, np.int32)
    action[1 - mover] = 99
    with pytest.raises(ActionError, match=r"99 .* is outside \[0, 9\)"):
        env.step(state, action)  # was: only the mover's action would be looked at
    action[1 - mover] = 0
    state, ts = env.step(state, action)
    mask = np.asarray(ts.observation.action_mask)
    assert not mask[1 - mover, 0] and mask[mover].all()  # the cell taken; the player who just moved: all ones


class HostCorridor(Corridor):
    is_jax_native = False


def test_refusals_follow_the_export_contract():
    corridor = Corridor()
    with pytest.raises(InvalidArgumentError, match=r"^to_jumanji\(add_global_state=1\): give True \("):
        to_jumanji(corridor, add_global_state=1)
    with pytest.raises(InvalidArgumentError, match=r"'<unregistered>' is single-agent, and the global state is"):
        to_jumanji(corridor, add_global_state=True)
    with pytest.raises(
        InvalidArgumentError, match=r"^to_jumanji needs a JAX-native env; .* envhub.interop.sebulba_factory"
    ):
        to_jumanji(HostCorridor())
    with pytest.raises(InvalidArgumentError, match=r"^to_jumanji: '<unregistered>' drops final_obs \(DropFinalObs\)"):
        to_jumanji(DropFinalObs(corridor))
    with pytest.raises(InvalidArgumentError, match=r"has num_envs=2: make it without num_envs \(jumanji code vmaps"):
        to_jumanji(envhub.make("jumanji/Snake-v1", num_envs=2))
    with pytest.raises(InvalidArgumentError, match=r"make it first: to_jumanji\(envhub.make\('jumanji/Snake-v1'\)\)"):
        to_jumanji("jumanji/Snake-v1")
    exported = to_jumanji(corridor)
    with pytest.raises(InvalidArgumentError, match=r"was given a dict as its state, not the EnvhubJumanjiState"):
        exported.step({"pos": 0}, 1)
    state = EnvhubJumanjiState(env_state=None, key=KEY, step_count=jnp.int32(0))
    corridor.close()
    with pytest.raises(ClosedEnvironmentError, match=r"^step\(\) called on environment"):
        exported.step(state, 1)
    with pytest.raises(ClosedEnvironmentError, match=r"^to_jumanji\(\) called on environment '.*' after close\(\)"):
        to_jumanji(corridor)


def test_it_pickles_as_its_call_and_leaves_the_env_to_its_maker():
    env = envhub.make("jumanji/Snake-v1", num_rows=6, num_cols=6)
    exported = to_jumanji(env)
    back = pickle.loads(pickle.dumps(exported))
    assert type(back) is type(exported) and back.made.flags == {"add_global_state": False}
    assert back.env is not env and back.observation_spec.grid.shape == (6, 6, 5)  # made again, with its kwargs
    exported.close()
    assert not env.closed
