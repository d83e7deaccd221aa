"""envhub-jaxmarl: the conformance kit on two envs (KIT), and ground truth against jaxmarl's own
``reset``/``step_env`` on every runnable id (the same keys and actions give jaxmarl's values), with longer
tests per family of how episode ends split into terminated and truncated."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jaxmarl
import numpy as np
import pytest
from envhub_jaxmarl import FAMILIES
from jaxmarl.environments.smax import map_name_to_scenario
from jaxmarl.registration import registered_envs

import envhub
from envhub import testing
from envhub.plugin import ActionError, EnvUnavailableError, InvalidArgumentError, RenderError
from envhub.testing.toy_envs import Corridor

SPECS = envhub.list_envs("jaxmarl")
RUNNABLE = [s.id for s in SPECS if s.available]


def test_every_jaxmarl_id_is_listed_and_the_unmapped_say_why():
    assert sorted(s.name for s in SPECS) == sorted(registered_envs)
    assert sorted(s.name for s in SPECS if s.available) == sorted(FAMILIES)
    with pytest.raises(
        EnvUnavailableError,
        match=r"'jaxmarl/LearnedPolicyEnemySMAX' is listed but unavailable here: .*trained enemy policy",
    ):
        envhub.make("jaxmarl/LearnedPolicyEnemySMAX")
    with pytest.raises(EnvUnavailableError, match=r"jaxrobotarium package"):
        envhub.make("jaxmarl/JaxRobotarium_navigation")


# --- the conformance kit ----------------------------------------------------------------------------

# MPE: a time limit only; hanabi: the game's end, masks, no limit of its own. SMAX (wins and losses,
# masks, the limit) has the ground truth below: a kit class for it costs ~15 s of the
# suite's time budget (issue 31).
KIT = {"MPE_simple_spread_v3": {}, "hanabi": {}}
for _name, _kwargs in KIT.items():
    _cls = "TestKit_" + _name
    globals()[_cls] = type(
        _cls,
        (testing.ConformanceTests,),
        {"env_id": f"jaxmarl/{_name}", "make_kwargs": _kwargs, "__module__": __name__},
    )


def random_actions(env, key, obs):
    """A random action per agent (a legal one where the env has masks)."""
    keys = dict(zip(env.agents, jax.random.split(key, len(env.agents))))
    out = {}
    for agent in env.agents:
        space = env.single_action_space.spaces[agent]
        if isinstance(obs[agent], dict):
            logits = jnp.where(obs[agent]["legal_action_mask"], 0.0, -jnp.inf)
            out[agent] = jax.random.categorical(keys[agent], logits).astype(space.dtype)
        else:
            batch = () if env.num_envs is None else (env.num_envs,)
            out[agent] = space.sample(keys[agent], batch)
    return out


def traced_rollout(env, key, num_steps, inside=False):
    """Inside a trace: a rollout of random (legal) actions; per step the state before, the step key, actions,
    TimeStep (and, with ``inside``, whether obs and final_obs lie in the observation space)."""
    space = env.observation_space

    def body(carry, k):
        state, obs = carry
        actions = random_actions(env, jax.random.fold_in(k, 1), obs)
        new, ts = env.step(k, state, actions)
        out = (state, k, actions, ts)
        return (new, ts.obs), (*out, space.contains(ts.obs) & space.contains(ts.final_obs)) if inside else out

    state, first = env.init(key)
    keys = jax.random.split(jax.random.fold_in(key, 1), num_steps)
    return jax.lax.scan(body, (state, first.obs), keys)[1]


def rollout(env, key, num_steps):
    """``traced_rollout``, compiled."""
    return jax.jit(lambda k: traced_rollout(env, k, num_steps))(key)


def side_by_side(env, raw, before, keys, actions):
    """Inside a trace: jaxmarl's ``step_env`` of envhub's state before each step with the per-env key envhub's
    base gives it, and jaxmarl's reset with the per-env key envhub resets with (reset_spares=False)."""
    n = env.num_envs
    step_keys = jax.vmap(lambda k: jax.random.split(jax.random.split(k)[0], n))(keys)
    reset_keys = jax.vmap(lambda k: jax.random.split(jax.random.split(k)[1], n))(keys)
    stepped = jax.vmap(jax.vmap(raw.step_env))(step_keys, before.env, actions)
    first_obs, _ = jax.vmap(jax.vmap(raw.reset))(reset_keys)
    return stepped, first_obs


def compiled_side_by_side(env, raw, before, keys, actions):
    """``side_by_side`` as two programs of jaxmarl's alone (its step, its reset): the float results of SMAX's
    step differ in the last bit when XLA compiles it into a larger program."""
    n = env.num_envs
    step_keys = jax.vmap(lambda k: jax.random.split(jax.random.split(k)[0], n))(keys)
    reset_keys = jax.vmap(lambda k: jax.random.split(jax.random.split(k)[1], n))(keys)
    stepped = jax.jit(jax.vmap(jax.vmap(raw.step_env)))(step_keys, before.env, actions)
    first_obs, _ = jax.jit(jax.vmap(jax.vmap(raw.reset)))(reset_keys)
    return stepped, first_obs


# --- ground truth: envhub and jaxmarl side by side ---------------------------------------------------


@pytest.mark.parametrize("env_id", [i for i in RUNNABLE if i.split("/")[1] not in KIT])
def test_every_env_steps_as_jaxmarl_steps(env_id):
    """Ground truth on every runnable id, in one compiled program per id: envhub's rollout of 2 envs with a
    time limit of 3 next to jaxmarl's own ``step_env`` of each state before (same actions, per-env keys) and
    its ``reset`` with envhub's reset keys, on the jaxmarl env envhub built (its ``max_steps`` set for the
    limit). Also: observations inside the spaces, a reward per agent, an episode end every 3 steps at the
    latest. (The kit's two envs get the longer family tests below.)"""
    env = envhub.make(env_id, num_envs=2, max_episode_steps=3, reset_spares=False)
    raw = env.unwrapped.marl_env

    @jax.jit
    def run(key):
        before, keys, actions, ts, inside = traced_rollout(env, key, 7, inside=True)
        return ts, inside, *side_by_side(env, raw, before, keys, actions)

    ts, inside, (obs, _, rewards, dones, _), first = run(jax.random.key(0))
    assert bool(inside.all()), f"{env_id}: an observation outside {env.observation_space}"
    assert sorted(ts.reward) == sorted(env.agents)
    assert all(r.dtype == jnp.float32 and r.shape == (7, 2) for r in ts.reward.values())
    done = np.asarray(ts.done)
    assert done[:3].any(axis=0).all() and done[3:6].any(axis=0).all()
    assert_trees_equal(own_obs(env, ts.final_obs), {a: obs[a] for a in env.agents})
    assert_trees_equal(ts.reward, {a: rewards[a] for a in env.agents})
    assert_trees_equal(ts.info["agent_done"], {a: dones[a] for a in env.agents})
    # jaxmarl's end is envhub's end; envhub's limit, where jaxmarl has none of its own, is a truncation.
    np.testing.assert_array_equal(done, np.asarray(dones["__all__"]) | np.asarray(ts.truncated))
    assert_trees_equal(own_obs(env, ts.obs), {a: first[a] for a in env.agents}, done)  # jaxmarl's reset, same key
    assert_trees_equal(ts.obs, ts.final_obs, ~done)


def own_obs(env, obs):
    """Per agent, the observation without envhub's mask."""
    return {a: obs[a]["observation"] if isinstance(obs[a], dict) else obs[a] for a in env.agents}


def assert_trees_equal(a, b, where=None):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        x, y = np.asarray(x), np.asarray(y)
        np.testing.assert_array_equal(x if where is None else x[where], y if where is None else y[where])


def test_mpe_steps_are_jaxmarl_steps_and_its_time_limit_is_truncation():
    """MPE ends an episode only at its step limit: truncated, never terminated; jaxmarl's max_steps=25
    runs 26 steps, which is envhub's default max_episode_steps, and max_episode_steps=T runs T."""
    env = envhub.make("jaxmarl/MPE_simple_spread_v3", num_envs=3, reset_spares=False)
    assert env.metadata["time_limit"] == 26
    raw = jaxmarl.make("MPE_simple_spread_v3")
    before, keys, actions, ts = rollout(env, jax.random.key(1), 60)
    (obs, _, rewards, dones, _), first = compiled_side_by_side(env, raw, before, keys, actions)
    assert_trees_equal(ts.final_obs, {a: obs[a] for a in env.agents})
    assert_trees_equal(ts.reward, {a: rewards[a] for a in env.agents})
    done = np.asarray(dones["__all__"])
    np.testing.assert_array_equal(ts.truncated, done)
    assert not np.asarray(ts.terminated).any()
    np.testing.assert_array_equal(np.flatnonzero(done[:, 0]) + 1, [26, 52])  # every 26 steps
    assert_trees_equal(ts.obs, {a: first[a] for a in env.agents}, done)  # jaxmarl's reset, same key
    assert_trees_equal(ts.obs, ts.final_obs, ~done)
    short = envhub.make("jaxmarl/MPE_simple_spread_v3", num_envs=2, max_episode_steps=5)
    assert short.unwrapped.marl_env.max_steps == 4 and short.metadata["time_limit"] == 5
    np.testing.assert_array_equal(
        np.flatnonzero(np.asarray(rollout(short, jax.random.key(2), 12)[3].truncated)[:, 0]) + 1, [5, 10]
    )


def test_smax_wins_and_losses_are_terminated_the_limit_truncated_masks_are_jaxmarl_masks():
    kwargs = {"scenario": map_name_to_scenario("3m"), "max_episode_steps": 20}
    env = envhub.make("jaxmarl/HeuristicEnemySMAX", num_envs=4, reset_spares=False, **kwargs)
    raw = jaxmarl.make("HeuristicEnemySMAX", scenario=kwargs["scenario"], max_steps=19)  # 20 steps (see README)
    before, keys, actions, ts = rollout(env, jax.random.key(3), 120)
    (obs, after, rewards, dones, _), _ = compiled_side_by_side(env, raw, before, keys, actions)
    assert_trees_equal(own_obs(env, ts.final_obs), {a: obs[a] for a in env.agents})
    assert_trees_equal(ts.reward, {a: rewards[a] for a in env.agents})
    assert_trees_equal(ts.info["agent_done"], {a: dones[a] for a in env.agents})
    masks = jax.jit(jax.vmap(jax.vmap(raw.get_avail_actions)))(after)  # one program, not one per operation
    assert_trees_equal({a: ts.final_obs[a]["legal_action_mask"] for a in env.agents}, masks)
    alive = np.asarray(after.state.unit_alive)
    wiped = ~alive[..., :3].any(-1) | ~alive[..., 3:].any(-1)
    done = np.asarray(dones["__all__"])
    np.testing.assert_array_equal(ts.terminated, done & wiped)
    np.testing.assert_array_equal(ts.truncated, done & ~wiped)
    assert np.asarray(ts.terminated).any() and np.asarray(ts.truncated).any(), "both ends must happen"
    # info["won_episode"]: jaxmarl's win (enemies wiped out, an ally alive), which is Mava's SmaxWrapper rule on the
    # same rewards (LAST & every agent's reward >= 1); random play loses here (a won step: tests/test_interop_jumanji.py)
    won = np.asarray(ts.info["won_episode"])
    assert won.dtype == np.bool_ and won.shape == done.shape
    np.testing.assert_array_equal(won, done & alive[..., :3].any(-1) & ~alive[..., 3:].any(-1))
    np.testing.assert_array_equal(won, done & np.all([np.asarray(rewards[a]) >= 1.0 for a in env.agents], axis=0))


def test_hanabi_ends_are_terminations_with_jaxmarl_legal_moves():
    env = envhub.make("jaxmarl/hanabi", num_envs=8, reset_spares=False)
    raw = jaxmarl.make("hanabi")
    before, keys, actions, ts = rollout(env, jax.random.key(4), 80)
    (obs, after, rewards, dones, _), first = compiled_side_by_side(env, raw, before, keys, actions)
    assert_trees_equal(own_obs(env, ts.final_obs), {a: obs[a] for a in env.agents})
    assert_trees_equal(ts.reward, {a: rewards[a] for a in env.agents})
    legal = jax.jit(jax.vmap(jax.vmap(raw.get_legal_moves)))(after)  # one program, not one per operation
    assert_trees_equal({a: ts.final_obs[a]["legal_action_mask"] for a in env.agents}, legal)
    done = np.asarray(dones["__all__"])
    assert done.any()
    np.testing.assert_array_equal(ts.terminated, done)
    assert not np.asarray(ts.truncated).any()
    assert_trees_equal(own_obs(env, ts.obs), {a: first[a] for a in env.agents}, done)


def test_overcooked_limit_keeps_its_observations():
    """Overcooked shows the time left in its observation: max_episode_steps is jaxmarl's own max_steps,
    so the observations are those of jaxmarl's env with that limit, and the limit step is truncated."""
    env = envhub.make("jaxmarl/overcooked", num_envs=2, max_episode_steps=6, reset_spares=False)
    raw = jaxmarl.make("overcooked", max_steps=6)
    before, keys, actions, ts = rollout(env, jax.random.key(5), 13)
    (obs, _, rewards, dones, infos), _ = compiled_side_by_side(env, raw, before, keys, actions)
    assert_trees_equal(ts.final_obs, {a: obs[a] for a in env.agents})
    assert_trees_equal(ts.info["shaped_reward"], infos["shaped_reward"])
    np.testing.assert_array_equal(np.flatnonzero(np.asarray(ts.truncated)[:, 0]) + 1, [6, 12])
    assert not np.asarray(ts.terminated).any()


def test_observation_spaces_fit_what_jaxmarl_returns():
    """jaxmarl 0.2.0 declares Overcooked's grid as (5, 4, 26) float32; its observations are (4, 5, 26) uint8."""
    space = envhub.make("jaxmarl/overcooked").single_observation_space.spaces["agent_0"]
    assert space.shape == (4, 5, 26) and space.dtype == np.uint8
    hanabi = envhub.make("jaxmarl/hanabi").single_observation_space.spaces["agent_0"]
    assert hanabi["observation"].shape == (658,) and hanabi["legal_action_mask"].shape == (21,)


def test_kwargs_reach_jaxmarl_and_max_steps_is_refused_with_the_name_to_use():
    env = envhub.make("jaxmarl/MPE_simple_spread_v3", num_agents=4, num_landmarks=4)
    assert env.agents == ("agent_0", "agent_1", "agent_2", "agent_3")
    assert envhub.make("jaxmarl/HeuristicEnemySMAX").metadata["time_limit"] == 101
    with pytest.raises(envhub.EnvKwargsError, match=r"max_steps"):
        envhub.make("jaxmarl/SMAX", max_steps=10)
    with pytest.raises(InvalidArgumentError, match=r"max_episode_steps=0.*int >= 1"):
        envhub.make("jaxmarl/MPE_simple_spread_v3", max_episode_steps=0)
    with pytest.raises(InvalidArgumentError, match=r"NormalizeReward needs one reward per step"):
        envhub.wrappers.NormalizeReward(env)


def test_mpe_time_step_must_be_positive():
    """jaxmarl takes dt=0 (the agents never move) and a negative dt (the physics runs backwards) without an error."""
    for bad in (0, 0.0, -0.1):
        with pytest.raises(InvalidArgumentError, match=rf"dt={bad} is out of range: it must be > 0.0; give a value"):
            envhub.make("jaxmarl/MPE_simple_spread_v3", dt=bad)
    assert envhub.make("jaxmarl/MPE_simple_spread_v3", dt=0.05).unwrapped


def test_what_the_env_sets_itself_is_not_listed_and_is_refused_by_name():
    """MPE_simple_spread_v3 passes dim_c (and agents, colour, ...) to jaxmarl's SimpleMPE itself: `envhub info` lists
    them no more, and make refuses them before jaxmarl's 'multiple values' TypeError."""
    (spec,) = [s for s in SPECS if s.id == "jaxmarl/MPE_simple_spread_v3"]
    declared = spec.kwargs() if callable(spec.kwargs) else spec.kwargs
    listed = {name for name, kw in declared.items() if not kw.refused}  # what `envhub info` lists
    assert "dt" in listed and "dim_c" not in listed and "colour" not in listed and "agents" not in listed
    with pytest.raises(envhub.EnvKwargsError, match=r"dim_c=3 is refused: jaxmarl/MPE_simple_spread_v3 sets dim_c it"):
        envhub.make("jaxmarl/MPE_simple_spread_v3", dim_c=3)
    assert envhub.make("jaxmarl/MPE_simple_v3", dim_c=3).unwrapped  # SimpleMPE's own: it takes it
    # The facmac 3a/6a/9a ids are made by a function of no arguments; SMAX spells its action type in lower case, and
    # the plugin maps its discrete actions only.
    with pytest.raises(envhub.EnvKwargsError, match=r"unknown keyword argument dt=0.1; .* accepts max_episode_steps"):
        envhub.make("jaxmarl/MPE_simple_facmac_3a_v1", dt=0.1)
    assert envhub.make("jaxmarl/SMAX", action_type="discrete").unwrapped
    with pytest.raises(envhub.EnvKwargsError, match=r"action_type='continuous' \(str\) is not 'discrete'"):
        envhub.make("jaxmarl/SMAX", action_type="continuous")


def test_no_agents_is_refused_at_make():
    """jaxmarl takes num_agents=0 and fails at init (MPE: ZeroDivisionError), -1 inside its make."""
    for bad in (0, -1):
        with pytest.raises(InvalidArgumentError, match=rf"num_agents={bad} for 'jaxmarl/MPE_simple_spread_v3': use an"):
            envhub.make("jaxmarl/MPE_simple_spread_v3", num_agents=bad)
    with pytest.raises(InvalidArgumentError, match=r"'jaxmarl/MPE_simple_tag_v3' made with .* has no agents"):
        envhub.make("jaxmarl/MPE_simple_tag_v3", num_good_agents=0, num_adversaries=0)
    for bad in (1, 6):  # Hanabi is played by 2 to 5 (jaxmarl asserts it)
        with pytest.raises(
            InvalidArgumentError, match=rf"num_agents={bad} for 'jaxmarl/hanabi': hanabi is played by 2 to 5"
        ):
            envhub.make("jaxmarl/hanabi", num_agents=bad)


def test_every_family_is_listed_available_and_listing_prints_nothing(capfd):
    """Every family is listed as available (what `envhub list jaxmarl` shows), and listing prints nothing.
    jaxmarl 0.2.0's import also sets sys.stdout to sys.__stdout__ and prints its submodules there, once per
    process: that the plugin keeps the caller's stdout and drops those lines is checked in a fresh interpreter
    by the core's tests/test_backends_quiet.py (which imports jaxmarl there, as a user's first make does)."""
    available = {spec.id for spec in envhub.list_envs("jaxmarl") if spec.unavailable is None}
    assert available == {f"jaxmarl/{n}" for n in FAMILIES}
    assert capfd.readouterr() == ("", "")


# --- PettingZoo ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["MPE_simple_spread_v3", "HeuristicEnemySMAX", "hanabi"])
def test_pettingzoo_parallel_export_passes_pettingzoo_api_test(name):
    from pettingzoo.test import parallel_api_test

    parallel_api_test(
        envhub.interop.to_pettingzoo_parallel(envhub.make(f"jaxmarl/{name}", max_episode_steps=30)), num_cycles=70
    )


def test_pettingzoo_parallel_export_steps_the_envhub_env():
    """The export's values are envhub's: a 5-step episode of MPE, reached observations at the end, every agent
    done on that step and gone from agents; stepping again needs reset()."""
    env = envhub.make("jaxmarl/MPE_simple_spread_v3", max_episode_steps=5)
    par = envhub.interop.to_pettingzoo_parallel(env, seed=3)
    obs, infos = par.reset()
    assert sorted(obs) == sorted(env.agents) and infos["agent_0"] == {"agent_done": False}
    for t in range(5):
        obs, rewards, terms, truncs, infos = par.step({a: 1 for a in par.agents})
        assert all(isinstance(r, float) for r in rewards.values()) and not any(terms.values())
        assert all(truncs.values()) == (t == 4) and all(par.observation_space(a).contains(obs[a]) for a in obs)
    assert par.agents == []
    with pytest.raises(InvalidArgumentError, match=r"the episode has ended: call reset\(\)"):
        par.step({a: 1 for a in env.agents})
    par.reset()
    with pytest.raises(ActionError, match=r"structure does not match: no action for \['agent_2'\]"):
        par.step({"agent_0": 1, "agent_1": 1})
    with pytest.raises(InvalidArgumentError, match=r"needs a simultaneous multi-agent .* is single-agent"):
        envhub.interop.to_pettingzoo_parallel(Corridor())
    with pytest.raises(InvalidArgumentError, match=r"needs an unbatched env"):
        envhub.interop.to_pettingzoo_parallel(envhub.make("jaxmarl/hanabi", num_envs=2))


# --- rendering -------------------------------------------------------------------------------------


def test_pettingzoo_parallel_export_renders_the_env_when_asked():
    env = envhub.make("jaxmarl/MPE_simple_spread_v3")
    par = envhub.interop.to_pettingzoo_parallel(env, render_mode="rgb_array")
    assert par.metadata["render_modes"] == ["rgb_array"] and par.render_mode == "rgb_array"
    par.reset()
    before = par.render()
    assert before.shape == (256, 256, 3) and before.dtype == np.uint8
    par.step({a: 1 for a in par.agents})  # every agent moves: the frame changes
    assert not np.array_equal(par.render(), before)
    assert envhub.interop.to_pettingzoo_parallel(env).render() is None  # no render_mode: no frames
    with pytest.raises(
        InvalidArgumentError, match=r"to_pettingzoo_parallel\(render_mode='human'\): .* draws \['rgb_array'\]"
    ):
        envhub.interop.to_pettingzoo_parallel(env, render_mode="human")


def assert_circles_drawn(frame, centres, radii, colours, extent):
    """Each circle's colour at its centre pixel, unless a circle drawn after it covers it (within 2 px); returns
    how many were checked. ``extent`` = (x0, x1, y0, y1), the world the frame spans (y up)."""
    (x0, x1, y0, y1), (h, w) = extent, frame.shape[:2]
    margin, checked = 2 * (x1 - x0) / w, 0
    for k, ((x, y), colour) in enumerate(zip(centres, colours)):
        if any(np.hypot(*(centres[j] - centres[k])) < radii[j] + margin for j in range(k + 1, len(centres))):
            continue
        row, col = int((y1 - y) / (y1 - y0) * h), int((x - x0) / (x1 - x0) * w)
        np.testing.assert_array_equal(frame[row, col], colour, err_msg=f"circle {k} at {(x, y)}")
        checked += 1
    return checked


def test_mpe_renders_its_entities_where_they_are_and_an_env_without_a_drawer_says_so(monkeypatch):
    env = envhub.make("jaxmarl/MPE_simple_spread_v3", num_envs=2)
    state, _ = env.init(jax.random.key(0))
    frames = env.render(state)
    assert frames.shape == (2, 256, 256, 3) and frames.dtype == np.uint8
    marl = env.unwrapped.marl_env
    checked = [  # each env's own positions: an entity's colour at its centre (arena -2..2)
        assert_circles_drawn(
            frames[i], np.asarray(state.env.p_pos[i]), np.asarray(marl.rad), marl.colour, (-2, 2, -2, 2)
        )
        for i in range(2)
    ]
    assert sum(checked) >= 8, checked  # of 12 entities
    np.testing.assert_array_equal(env.render(state, index=1), frames[1])
    import envhub_jaxmarl.render

    monkeypatch.setattr(envhub_jaxmarl.render, "drawer", lambda name, family: None)  # every runnable family draws
    assert env.render_modes == ()
    with pytest.raises(
        RenderError, match=r"'jaxmarl/MPE_simple_spread_v3'.*MPE, SMAX, coin game, Hanabi and Overcooked"
    ):
        env.render(state)


@pytest.mark.parametrize("name", ["SMAX", "HeuristicEnemySMAX"])
def test_smax_renders_living_units_allies_blue_enemies_green(name):
    env = envhub.make(f"jaxmarl/{name}", num_envs=2)
    state, _ = env.init(jax.random.key(0))
    frames = env.render(state)
    smax = getattr(env.unwrapped.marl_env, "_env", env.unwrapped.marl_env)
    units = getattr(state.env, "state", state.env)
    radii = np.asarray(smax.unit_type_radiuses)[np.asarray(units.unit_types)]
    colours = [(0, 0, 255)] * smax.num_allies + [(0, 128, 0)] * smax.num_enemies
    extent = (0, smax.map_width, 0, smax.map_height)
    checked = [
        assert_circles_drawn(frames[i], np.asarray(units.unit_positions[i]), radii[i], colours, extent)
        for i in range(2)
    ]
    assert sum(checked) >= smax.num_allies + smax.num_enemies, checked  # of 2 x 10 units


def test_coin_game_renders_agents_and_coins_in_their_cells():
    from envhub_jaxmarl.render import COIN_GAME

    env = envhub.make("jaxmarl/coin_game", num_envs=2)
    state, _ = env.init(jax.random.key(0))
    frames = env.render(state)
    colours = [tuple(round(255 * c) for c in colour) for _, _, colour in COIN_GAME]
    radii = np.array([radius for _, radius, _ in COIN_GAME])
    for i in range(2):  # each env's own cells (3x3 grid, a cell's centre at position + 0.5)
        centres = np.stack([np.asarray(getattr(state.env, field)[i]) + 0.5 for field, _, _ in COIN_GAME])
        assert assert_circles_drawn(frames[i], centres, radii, colours, (0, 3, 0, 3)) >= 2, centres


def test_overcooked_renders_each_cook_in_its_tile_and_colour():
    """jaxmarl's kitchen tiles, 32 px each, with one tile of border: agent_0 is the red cook, agent_1 the blue."""
    env = envhub.make("jaxmarl/overcooked", num_envs=2)
    state, _ = env.init(jax.random.key(0))
    for t in range(4):  # the two envs' cooks walk apart
        actions = {a: jnp.array([t % 4, (t + 1) % 4], jnp.int32) for a in env.agents}
        state, _ = env.step(jax.random.key(t + 1), state, actions)
    frames = env.render(state)
    assert frames.shape == (2, 192, 224, 3) and frames.dtype == np.uint8  # cramped_room: 6 x 7 tiles
    positions = np.asarray(state.env.agent_pos)
    assert not (positions[0] == positions[1]).all(), "the two envs' cooks should stand apart"
    for i in range(2):
        for cook, colour in zip(positions[i], [(255, 0, 0), (0, 0, 255)]):
            x, y = (int(v) + 1 for v in cook)
            tile = {
                tuple(int(v) for v in c) for c in frames[i, y * 32 : (y + 1) * 32, x * 32 : (x + 1) * 32].reshape(-1, 3)
            }
            assert colour in tile and ({(255, 0, 0), (0, 0, 255)} - {colour}).isdisjoint(tile), (i, cook)


def test_overcooked_v2_renders_each_cook_in_its_tile_and_colour():
    """jaxmarl's OvercookedV2Visualizer: 32 px tiles, no border; agent_0 is the red cook, agent_1 the blue."""
    env = envhub.make("jaxmarl/overcooked_v2", num_envs=2)
    assert env.render_modes == ("rgb_array",)
    state, _ = env.init(jax.random.key(0))
    for t in range(4):  # the two envs' cooks walk apart
        actions = {a: jnp.array([t % 4, (t + 1) % 4], jnp.int32) for a in env.agents}
        state, _ = env.step(jax.random.key(t + 1), state, actions)
    frames = env.render(state)
    height, width = np.asarray(state.env.grid).shape[1:3]
    assert frames.shape == (2, 32 * height, 32 * width, 3) and frames.dtype == np.uint8
    xs, ys = np.asarray(state.env.agents.pos.x), np.asarray(state.env.agents.pos.y)
    assert not ((xs[0] == xs[1]) & (ys[0] == ys[1])).all(), "the two envs' cooks should stand apart"
    red, blue = (255, 0, 0), (0, 0, 255)
    for i in range(2):
        for x, y, colour in zip(xs[i], ys[i], [red, blue]):
            tile = {
                tuple(int(v) for v in c) for c in frames[i, y * 32 : (y + 1) * 32, x * 32 : (x + 1) * 32].reshape(-1, 3)
            }
            assert colour in tile and ({red, blue} - {colour}).isdisjoint(tile), (i, x, y)
    np.testing.assert_array_equal(env.render(state, index=1), frames[1])


def test_hanabi_draws_its_game_as_text_and_a_hint_changes_the_frame():
    """The player to move gives its first legal hint (actions 10-19: colour, then rank hints; the other agent's
    only legal action is 20, no-op): an information token is spent, and the frame's first line changes."""
    from envhub_jaxmarl.render import HANABI_LINE, hanabi_lines

    env = envhub.make("jaxmarl/hanabi", num_envs=2)
    assert env.render_modes == ("rgb_array",)
    state, ts = env.init(jax.random.key(0))
    before = env.render(state)
    assert before.ndim == 4 and before.shape[0] == 2 and before.shape[-1] == 3 and before.dtype == np.uint8
    assert (before[0] == 255).all(-1).mean() > 0.5 and (before[0] < 100).all(-1).sum() > 500  # dark text on white
    actions = {}
    for agent in env.agents:
        hints = np.asarray(ts.obs[agent]["legal_action_mask"])[:, 10:20]
        actions[agent] = jnp.asarray(np.where(hints.any(-1), 10 + hints.argmax(-1), 20), jnp.int32)
    np.testing.assert_array_equal((np.stack(list(actions.values())) < 20).sum(0), [1, 1])  # a hint per game
    state, _ = env.step(jax.random.key(1), state, actions)
    after = env.render(state)
    assert after.shape == before.shape
    marl, host = env.unwrapped.marl_env, jax.device_get(state.env)
    for i in range(2):
        lines = hanabi_lines(marl, jax.tree.map(lambda x, i=i: x[i], host))
        assert "Information 7" in lines[0], lines  # of 8
        assert any(line.startswith("  ") and "hinted XX" not in line for line in lines), lines  # a hinted card
        rows = np.nonzero((before[i] != after[i]).any(-1))[0]
        assert rows.min() < 8 + HANABI_LINE, rows.min()  # the tokens' line (the first) changed
        np.testing.assert_array_equal(env.render(state, index=i), after[i])
