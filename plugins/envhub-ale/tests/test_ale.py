"""envhub-ale: the conformance kit on Pong, and ground truth against ALE's own vector env (``AtariVectorEnv`` in
its same-step autoreset mode, seeded as envhub seeds it, given the same actions): every frame, reward, flag and
final frame equal, eagerly and inside one jitted scan.

ENVHUB_FULL_KIT=1 runs the ground truth on every bundled ROM (~1 s each); by default on SAMPLE.
"""

from __future__ import annotations

import gc
import os
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from ale_py import roms
from ale_py.registration import rom_id_to_name
from ale_py.vector_env import AtariVectorEnv
from envhub_ale import MULTIPLAYER_ONLY
from envhub_ale.environment import V5
from envhub_ale.xla import seeds_for

import envhub
from envhub import testing
from envhub.plugin import (
    ActionError,
    EnvKwargsError,
    HostEnvError,
    HostVmapError,
    InvalidArgumentError,
    StaleStateError,
)

warnings.filterwarnings("ignore", module="gymnasium")
FULL = os.environ.get("ENVHUB_FULL_KIT") == "1"
SAMPLE = ("breakout", "pong", "space_invaders", "ms_pacman")


class TestPongBatched(testing.ConformanceTests):
    env_id = "ale/Pong-v5"
    make_kwargs = {"num_envs": 2}


SINGLE_PLAYER = [r for r in roms.get_all_rom_ids() if r not in MULTIPLAYER_ONLY]


def test_every_bundled_rom_is_listed():
    specs = envhub.list_envs("ale")
    assert {s.id for s in specs} == {f"ale/{rom_id_to_name(r)}-v5" for r in roms.get_all_rom_ids()}
    assert sorted(s.id for s in specs if not s.available) == [
        "ale/Combat-v5",
        "ale/Joust-v5",
        "ale/MazeCraze-v5",
        "ale/Warlords-v5",
    ]
    assert len(specs) == len(roms.get_all_rom_ids()) > 100
    with pytest.raises(envhub.errors.EnvUnavailableError, match="multi-player-only ROM"):
        envhub.make("ale/Combat-v5")


# --- ground truth: ALE's own vector env, same seeds and actions ------------------------------------------


def ale_reference(game, n, key, actions, **kwargs):
    """ALE's AtariVectorEnv (same-step autoreset, its final frame in info) seeded as envhub seeds ``key``."""
    settings = {**V5, **kwargs}
    limit = settings.pop("max_episode_steps", 27_000)
    ref = AtariVectorEnv(game, num_envs=n, autoreset_mode="SameStep", max_num_frames_per_episode=2**31 - 1, **settings)
    obs, _ = ref.reset(seed=np.asarray(seeds_for(key, n)))
    out, elapsed = [(obs, None)], np.zeros(n, int)
    for action in actions:
        obs, reward, terminated, truncated, info = ref.step(np.asarray(action))
        final = np.stack([info["final_obs"][i] if terminated[i] else obs[i] for i in range(n)])
        elapsed = np.where(terminated, 0, elapsed + 1)
        truncated = elapsed >= limit  # envhub's limit: ALE's own repeats a frame (test below)
        if truncated.any():  # ALE's partial reset, continuing each emulator's random stream (seed -1)
            obs, info = ref.reset(options={"reset_mask": truncated})
            elapsed[truncated] = 0
        out.append((obs, (reward, terminated, truncated, final, info["lives"])))
    ref.close()
    return out


def assert_same(env, first, steps, reference):
    """envhub's first TimeStep and stacked steps equal ALE's, frame for frame."""
    frames = lambda x: np.asarray(x).reshape((-1, *env.single_observation_space.shape))  # noqa: E731
    np.testing.assert_array_equal(np.asarray(first.obs), frames(reference[0][0]))
    for t, (obs, (reward, terminated, truncated, final, lives)) in enumerate(reference[1:]):
        np.testing.assert_array_equal(np.asarray(steps.obs[t]), frames(obs), err_msg=f"obs at step {t}")
        np.testing.assert_array_equal(np.asarray(steps.final_obs[t]), frames(final), err_msg=f"final at {t}")
        np.testing.assert_array_equal(np.asarray(steps.reward[t]), reward.astype(np.float32))
        np.testing.assert_array_equal(np.asarray(steps.terminated[t]), terminated)
        np.testing.assert_array_equal(np.asarray(steps.truncated[t]), truncated)
        np.testing.assert_array_equal(np.asarray(steps.info["lives"][t]), lives)


def jitted_rollout(env, key, actions):
    @jax.jit
    def run(key, actions):
        state, first = env.init(key)
        return first, jax.lax.scan(lambda s, a: env.step(key, s, a), state, actions)[1]

    return run(key, actions)


@pytest.mark.parametrize("game", SINGLE_PLAYER if FULL else SAMPLE)
def test_steps_are_ale_steps(game):
    """3 emulators, 16 steps with a limit of 5 (ends at 5, 10, 15): envhub's jitted scan equals ALE's env."""
    n, key = 3, jax.random.key(3)
    env = envhub.make(f"ale/{rom_id_to_name(game)}-v5", num_envs=n, max_episode_steps=5)
    actions = jax.random.randint(jax.random.key(9), (16, n), 0, env.single_action_space.n, jnp.int32)
    first, steps = jitted_rollout(env, key, actions)
    assert np.asarray(steps.truncated).any(axis=1).tolist() == [t % 5 == 4 for t in range(16)]
    assert_same(env, first, steps, ale_reference(game, n, key, actions, max_episode_steps=5))


def test_episodes_ending_apart_reset_alone_eagerly():
    """Breakout with a life loss as the end (episodic_life): episodes end at different steps; eager steps."""
    n, key, kwargs = 4, jax.random.key(1), {"episodic_life": True, "repeat_action_probability": 0.0}
    env = envhub.make("ale/Breakout-v5", num_envs=n, **kwargs)
    actions = jax.random.randint(jax.random.key(2), (120, n), 0, 4, jnp.int32)
    state, first = env.init(key)
    steps = []
    for a in actions:
        state, ts = env.step(key, state, a)
        steps.append(ts)
    steps = jax.tree.map(lambda *x: np.stack(x), *steps)
    ends = np.asarray(steps.terminated)
    assert ends.any() and not (ends == ends[:, :1]).all(), "episodes should end at different steps"
    assert_same(env, first, steps, ale_reference("breakout", n, key, actions, **kwargs))


@pytest.mark.parametrize(
    ("game", "n", "steps", "kwargs"),
    [
        ("pong", 3, 16, {"max_episode_steps": 5}),  # every env cut at 5, 10, 15
        ("breakout", 4, 120, {"episodic_life": True, "repeat_action_probability": 0.0}),  # ends apart
    ],
)
def test_the_host_loop_steps_as_ale_on_emulators_of_its_own(game, n, steps, kwargs):
    """``env.host_loop()`` (ALE's send/recv from Python, the Sebulba factory's path) equals ALE's env frame for
    frame, while the env's own state steps its own emulators in between (each untouched by the other)."""
    key = jax.random.key(1)
    env = envhub.make(f"ale/{rom_id_to_name(game)}-v5", num_envs=n, **kwargs)
    actions = np.asarray(jax.random.randint(jax.random.key(2), (steps, n), 0, env.single_action_space.n, jnp.int32))
    loop = env.host_loop()
    state, _ = env.init(jax.random.key(7))  # other seeds: other frames, if the loop read these emulators
    got = [loop.reset(key)]
    for t, a in enumerate(actions):
        got.append(loop.step(a))
        if t < 16:  # the env's own emulators step in between (16 steps show the two apart; more cost seconds)
            state, _ = env.step(key, state, a)
    assert all(isinstance(x, np.ndarray) and not x.flags.writeable for x in jax.tree.leaves(got))
    stacked = jax.tree.map(lambda *x: np.stack(x), *got[1:])
    reference = ale_reference(game, n, key, actions, **kwargs)
    assert_same(env, got[0], stacked, reference)
    assert np.asarray(stacked.terminated if game == "breakout" else stacked.truncated).any()
    emulators = weakref.ref(loop.loop._vector)
    env.close()
    gc.collect()
    assert emulators() is None, "closing the env lets the loop's emulators go"


def test_the_host_loop_refuses_an_action_outside_the_set_even_unchecked(pong):
    """ALE would hang on it: refused by the loop itself also with ``validate_actions=False``; nothing stepped."""
    loop, twin = pong.host_loop(), envhub.make("ale/Pong-v5", num_envs=2).host_loop()
    loop.reset(jax.random.key(0)), twin.reset(jax.random.key(0))
    pong.validate_actions = False
    with pytest.raises(ActionError, match=r"'ale/Pong-v5': \[0, 6\] has values outside \[0, 6\)"):
        loop.step(np.array([0, 6], np.int32))
    np.testing.assert_array_equal(loop.step(np.ones(2, np.int32)).obs, twin.step(np.ones(2, np.int32)).obs)
    twin.env.close()


def test_ale_truncation_repeats_a_frame():
    """Why envhub counts steps for the time limit: at ALE's own frame limit, its vector env (0.12.1) reports the
    truncation with the frame before the step (the frame counter moves, the picture does not), where gymnasium's
    single ALE env shows the frame reached. If this starts failing, ALE fixed it: envhub could use its limit."""
    settings = {**V5, "repeat_action_probability": 0.0}
    vector = AtariVectorEnv("breakout", num_envs=1, max_num_frames_per_episode=20, **settings)
    frames = [vector.reset(seed=1)[0]]
    for t in range(5):
        obs, _, _, truncated, _ = vector.step(np.array([1 if t == 0 else 3], np.int32))
        frames.append(obs)
    assert truncated[0] and (frames[-1] == frames[-2]).all() and not (frames[-2] == frames[-3]).all()
    vector.close()


def test_dqn_preprocessing_as_kwargs():
    env = envhub.make(
        "ale/Pong-v5", num_envs=2, img_height=84, img_width=84, grayscale=True, stack_num=4, maxpool=True,
        noop_max=30, use_fire_reset=True, reward_clipping=True, repeat_action_probability=0.0,
    )  # fmt: skip
    assert env.single_observation_space.shape == (4, 84, 84)
    key, actions = jax.random.key(0), jnp.zeros((6, 2), jnp.int32)
    first, steps = jitted_rollout(env, key, actions)
    reference = ale_reference(
        "pong", 2, key, actions, img_height=84, img_width=84, grayscale=True, stack_num=4, maxpool=True,
        noop_max=30, use_fire_reset=True, reward_clipping=True, repeat_action_probability=0.0,
    )  # fmt: skip
    assert_same(env, first, steps, reference)


def test_programs_are_pure_xla_with_ales_calls():
    """No Python callback in init, step (with its same-step reset) or reset: only ALE's two FFI custom calls."""
    env = envhub.make("ale/Pong-v5", num_envs=2)
    key, state = jax.random.key(0), env.init(jax.random.key(0))[0]
    action = jnp.zeros(2, jnp.int32)
    for name, fn, args in (("init", env.init, (key,)), ("step", env.step, (key, state, action)),
                           ("reset", env.reset, (key, state))):  # fmt: skip
        text = jax.jit(fn).lower(*args).as_text()
        assert testing.host_callbacks(text) == [], name
        assert "atari_vector_xla_reset" in text, name
    assert "atari_vector_xla_step" in jax.jit(env.step).lower(key, state, action).as_text()


# --- refusals -------------------------------------------------------------------------------------------


@pytest.fixture
def pong():
    env = envhub.make("ale/Pong-v5", num_envs=2)
    yield env
    env.close()


def test_stale_state_and_bad_action_eagerly(pong):
    old, _ = pong.init(jax.random.key(0))
    state, _ = pong.step(jax.random.key(0), old, jnp.zeros(2, jnp.int32))
    with pytest.raises(StaleStateError, match=r"'ale/Pong-v5' was given a state from step \d+, but its newest"):
        pong.step(jax.random.key(0), old, jnp.zeros(2, jnp.int32))
    with pytest.raises(ActionError, match=r"'ale/Pong-v5': 6 at index \(1,\) is outside \[0, 6\)"):
        pong.step(jax.random.key(0), state, jnp.array([0, 6], jnp.int32))
    pong.step(jax.random.key(0), state, jnp.zeros(2, jnp.int32))  # the newest still steps


def test_refusals_in_jit_step_nothing_and_keep_the_newest(pong):
    step = jax.jit(pong.step)
    old, _ = pong.init(jax.random.key(0))
    state, _ = step(jax.random.key(0), old, jnp.zeros(2, jnp.int32))
    for given, action in ((old, jnp.zeros(2, jnp.int32)), (state, jnp.array([0, 99], jnp.int32))):
        refused, ts = step(jax.random.key(0), given, action)
        assert np.isnan(np.asarray(ts.reward)).all() and not np.asarray(ts.obs).any()
        with pytest.raises(HostEnvError, match="came from a call refused inside jit"):
            pong.step(jax.random.key(0), refused, jnp.zeros(2, jnp.int32))
    with pytest.raises(ActionError, match=r"99 at index \(1,\) is outside \[0, 6\)"):
        envhub.checked(pong.step)(jax.random.key(0), state, jnp.array([0, 99], jnp.int32))
    with pytest.raises(Exception, match="StaleStateError: 'ale/Pong-v5' was given, inside jit, a state that is not"):
        envhub.checked(pong.step)(jax.random.key(0), old, jnp.zeros(2, jnp.int32))
    _, ts = step(jax.random.key(0), state, jnp.zeros(2, jnp.int32))  # the newest still steps
    assert np.isfinite(np.asarray(ts.reward)).all()


def test_closed_env_refuses(pong):
    step = jax.jit(pong.step)
    state, _ = step(jax.random.key(0), *pong.init(jax.random.key(0))[:1], jnp.zeros(2, jnp.int32))
    pong.close()
    assert np.isnan(np.asarray(step(jax.random.key(0), state, jnp.zeros(2, jnp.int32))[1].reward)).all()
    with pytest.raises(envhub.errors.ClosedEnvironmentError, match="after close"):
        pong.step(jax.random.key(0), state, jnp.zeros(2, jnp.int32))


def test_vmap_is_refused_naming_num_envs():
    env = envhub.make("ale/Pong-v5")
    with pytest.raises(HostVmapError, match="num_envs"):
        jax.vmap(env.init)(jax.random.split(jax.random.key(0), 2))


def test_kwargs():
    with pytest.raises(InvalidArgumentError, match="both set the time limit"):
        envhub.make("ale/Pong-v5", max_episode_steps=5, max_num_frames_per_episode=20)
    with pytest.raises(EnvKwargsError, match="autoreset_mode"):
        envhub.make("ale/Pong-v5", autoreset_mode="NextStep")
    assert envhub.make("ale/Pong-v5").metadata["time_limit"] == 27_000  # v5: 108000 frames
    assert "no Python callback" in envhub.make("ale/Pong-v5").metadata["runs_on"]  # envhub info's line
    assert envhub.make("ale/Pong-v5", frameskip=2, max_num_frames_per_episode=14).metadata["time_limit"] == 7


def test_render_draws_each_emulator(pong):
    state, _ = pong.init(jax.random.key(0))
    frames = pong.render(state)
    assert frames.shape == (2, 210, 160, 3) and frames.dtype == np.uint8
    np.testing.assert_array_equal(pong.render(state, index=1), frames[1])
    np.testing.assert_array_equal(frames, np.asarray(pong.init(jax.random.key(0))[1].obs))


def test_strict_is_a_hard_stop_in_jit_and_keeps_the_state():
    """validate_actions="strict": an invalid action inside jit raises (JAX wraps the ActionError of the host
    callback), no emulator runs, and the state passed in steps again, under jit and eagerly."""
    env = envhub.make("ale/Pong-v5", num_envs=2, validate_actions="strict")
    step, key = jax.jit(env.step), jax.random.key(0)
    state, _ = env.init(key)
    state, _ = step(key, state, jnp.zeros(2, jnp.int32))
    for _ in range(2):  # twice: the Refs the failed program consumed are back
        with pytest.raises(jax.errors.JaxRuntimeError, match=r"ActionError: .*9 at index \(1,\) is outside \[0, 6\)"):
            step(key, state, jnp.array([0, 9], jnp.int32))
    with pytest.raises(ActionError, match=r"-1 at index \(0,\) is outside \[0, 6\)"):
        envhub.checked(env.step)(key, state, jnp.array([-1, 0], jnp.int32))
    after, ts = step(key, state, jnp.ones(2, jnp.int32))  # the refused calls changed nothing
    assert np.isfinite(np.asarray(ts.reward)).all()
    env.step(key, after, jnp.ones(2, jnp.int32))
    text = jax.jit(env.step).lower(key, after, jnp.zeros(2, jnp.int32)).as_text()
    assert testing.host_callbacks(text), "strict's stop is a host callback"
    env.close()


def test_export_is_refused_naming_why(pong):
    key = jax.random.key(0)
    state, _ = pong.init(key)
    why = r"jax.export of a program that runs 'ale/Pong-v5': ALE programs cannot be exported\. .*process's emulators"
    with pytest.raises(InvalidArgumentError, match=why):
        jax.export.export(jax.jit(pong.step))(key, state, jnp.zeros(2, jnp.int32))
    with pytest.raises(InvalidArgumentError, match=why):
        jax.export.export(jax.jit(pong.init))(key)
    _, ts = jax.jit(pong.step)(key, state, jnp.zeros(2, jnp.int32))  # jit is unaffected
    assert np.isfinite(np.asarray(ts.reward)).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"repeat_action_probability": -0.5}, r"repeat_action_probability=-0\.5 for ale/Pong-v5: use a float in \["),
        ({"repeat_action_probability": 1.5}, r"repeat_action_probability=1\.5 .*\[0, 1\]"),
        (
            {"repeat_action_probability": float("nan")},
            r"repeat_action_probability=nan is NaN, which no keyword argument takes; give a number",
        ),
        ({"frameskip": 0, "max_episode_steps": 5}, r"frameskip=0 for ale/Pong-v5: use an int >= 1"),
        ({"img_height": 0}, r"img_height=0 for ale/Pong-v5: use an int >= 1"),  # ALE hangs on it
        ({"img_width": -3}, r"img_width=-3 .*>= 1"),
        ({"stack_num": 0}, r"stack_num=0 .*>= 1"),  # ALE ends the process on it
        ({"noop_max": -1}, r"noop_max=-1 for ale/Pong-v5: use an int >= 0"),
        ({"num_threads": -1}, r"num_threads=-1 .*>= 0"),
        ({"thread_affinity_offset": -2}, r"thread_affinity_offset=-2 .*>= -1"),
    ],
)
def test_kwargs_out_of_range_are_refused_at_make(kwargs, message):
    with pytest.raises(InvalidArgumentError, match=message):
        envhub.make("ale/Pong-v5", **kwargs)
