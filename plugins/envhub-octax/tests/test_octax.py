"""envhub-octax: the conformance kit on a representative game, and ground truth against octax itself (the same
keys and actions give octax's values) on every game, one compiled program each.

Every compiled program of an octax game costs about 0.5 s even from JAX's persistent cache (a CHIP-8 emulator
per program), so by default the kit runs on brix (KIT_GAMES) and the ground truth on every game but the later
levels of a level family (FIRST_LEVELS: 22 of the 37 ids); ENVHUB_FULL_KIT=1 runs both on all 37.
"""

from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from envhub_octax.environment import DEFAULT_LIMIT, NO_LIMIT
from envhub_octax.games import game_names, import_octax, rom_dir, unlisted_levels

import envhub
from envhub import testing
from envhub.plugin import ActionError, EnvKwargsError, EnvUnavailableError, spaces

import_octax()
from octax.environments import create_environment  # noqa: E402

IDS = [f"octax/{name}" for name in game_names()]

# octax's CHIP-8 scatters uint16/int32 values into uint8/bool arrays, which jax 0.10 warns about on every trace.
pytestmark = pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types:FutureWarning")


def test_every_octax_game_is_listed():
    listed = envhub.list_envs("octax")
    assert [s.id for s in listed if s.available] == sorted(IDS, key=str.lower)
    assert len(IDS) == 37 and {"octax/brix", "octax/cavern1", "octax/space_flight10", "octax/deep"} <= set(IDS)
    # The two Cavern levels octax ships but its create_environment cannot name: listed, with the reason.
    assert sorted(s.id for s in listed if not s.available) == ["octax/cavern4a", "octax/cavern4b"]
    assert sorted(unlisted_levels()) == ["cavern4a", "cavern4b"]
    with pytest.raises(EnvUnavailableError, match=r"cavern4a\.ch8.*create_environment cannot build it"):
        envhub.make("octax/cavern4a")


# --- the conformance kit ----------------------------------------------------------------------------

# brix: unbatched, its ball lost within ~20 random steps (terminated), the CHIP-8's random numbers from the first
# step. The ground truth below covers batching (test_batched_games_step_as_octax_steps) and every game.
KIT_GAMES = ("brix",)
FULL_KIT = os.environ.get("ENVHUB_FULL_KIT") == "1"

for _env_id in IDS if FULL_KIT else [f"octax/{n}" for n in KIT_GAMES]:
    _name = "TestKit_" + _env_id.split("/", 1)[1]
    globals()[_name] = type(_name, (testing.ConformanceTests,), {"env_id": _env_id, "__module__": __name__})


# --- ground truth: envhub and octax side by side -----------------------------------------------------


def _side_by_side(env, game, key, num_steps):
    """Inside a trace: envhub's rollout of random actions, and octax's own ``step`` of every state before (same
    action), its ``reset`` with the keys envhub resets with (per env: reset_spares=False) and with its init keys.
    Unbatched, octax's ``lax.map``s each step on its own: vmapped, its CHIP-8 would run every opcode's branch."""
    n = env.num_envs

    def body(state, k):
        action = jax.random.randint(jax.random.fold_in(k, 1), () if n is None else (n,), 0, env.single_action_space.n)
        new, ts = env.step(k, state, action)
        return new, (state, action, ts, new)

    state, first = env.init(key)
    keys = jax.random.split(jax.random.fold_in(key, 1), num_steps)
    _, (before, actions, ts, after) = jax.lax.scan(body, state, keys)
    reset_keys = jax.vmap(lambda k: jax.random.split(k)[1])(keys)  # the base splits (step key, reset key)
    if n is None:
        reached = jax.lax.map(lambda args: game.step(*args), (before.env, actions))
        return (state, first), (ts, after), (reached, jax.lax.map(game.reset, reset_keys), game.reset(key))
    reached = jax.vmap(jax.vmap(game.step))(before.env, actions)
    fresh = jax.vmap(lambda k: jax.vmap(game.reset)(jax.random.split(k, n)))(reset_keys)
    return (state, first), (ts, after), (reached, fresh, jax.vmap(game.reset)(jax.random.split(key, n)))


def _leaves(tree):
    is_key = lambda x: jnp.issubdtype(getattr(x, "dtype", int), jax.dtypes.prng_key)  # noqa: E731
    return [np.asarray(jax.random.key_data(x) if is_key(x) else x) for x in jax.tree.leaves(tree)]


def _assert_equal(a, b, where=None):
    for x, y in zip(_leaves(a), _leaves(b), strict=True):
        np.testing.assert_array_equal(x if where is None else x[where], y if where is None else y[where])


def _assert_steps_are_octax_steps(env, key, num_steps):
    """Every step of envhub's rollout is octax's step of the same state and action (obs, final_obs, reward, flags,
    next state); where an episode ended, the next state is octax's reset with envhub's reset key, and init's is
    octax's reset. Returns the done and terminated flags."""
    game = env.unwrapped.octax_env  # what octax's create_environment builds: test_the_game_is_octaxs_own
    (state, first), (ts, after), (reached, fresh, started) = jax.jit(
        lambda key: _side_by_side(env, game, key, num_steps)
    )(key)
    _assert_equal((state.env, first.obs), started[:2])
    next_state, obs, reward, terminated, truncated, _ = reached
    _assert_equal(ts.final_obs, obs)
    np.testing.assert_array_equal(ts.reward, reward)
    np.testing.assert_array_equal(ts.terminated, terminated)
    np.testing.assert_array_equal(ts.truncated, truncated & ~terminated)
    done = np.asarray(ts.done)
    _assert_equal((after.env, ts.obs), (next_state, obs), ~done)
    _assert_equal((after.env, ts.obs), fresh[:2], done)
    return done, np.asarray(ts.terminated)


# Levels after a family's first (cavern2..6, space_flight2..10, target_shooter2..3) run their family's code on
# another ROM: their ground truth runs with ENVHUB_FULL_KIT=1 (0.5 s each, the suite's time budget).
FIRST_LEVELS = [i for i in IDS if not i[-1].isdigit() or i[-1] == "1" and not i[-2].isdigit()]


@pytest.mark.parametrize("env_id", IDS if FULL_KIT else FIRST_LEVELS)
def test_every_game_steps_as_octax_steps(env_id):
    """Ground truth on every game, one compiled program each: one game with a time limit of 2 for 5 steps, so
    at least two episodes end (octax's own limit truncates), and the reset after each is checked."""
    name = env_id.split("/", 1)[1]
    env = envhub.make(env_id, max_episode_steps=2)
    game = env.unwrapped.octax_env
    module = game.score_fn.__module__  # the game's own module: octax.environments.<name without its level>
    assert module == f"octax.environments.{name.rstrip('0123456789')}" and game.terminated_fn.__module__ == module
    rom = getattr(sys.modules[module], "rom_file", None) if not name[-1].isdigit() else f"{name}.ch8"
    assert game.rom_path == str(rom_dir() / rom) and game.max_num_steps_per_episodes == 2
    done, _ = _assert_steps_are_octax_steps(env, jax.random.key(0), 5)
    assert done[:2].any() and done[2:4].any(), f"{env_id}: an episode ran past the limit 2"
    assert env.single_observation_space == spaces.Box(False, True, (4, 64, 32), np.bool_)
    assert env.single_action_space == spaces.Discrete(env.unwrapped.octax_env.num_actions, dtype=np.int32)


def test_batched_games_step_as_octax_steps():
    """Batched: each game's own keys (split per env, as envhub's base does), terminations (Cavern's level 5
    crashes within a few random steps) and truncations."""
    env = envhub.make("octax/cavern5", num_envs=2, max_episode_steps=3, reset_spares=False)
    done, terminated = _assert_steps_are_octax_steps(env, jax.random.key(1), 5)
    assert terminated.any() and (done & ~terminated).any()  # a crash, and octax's limit


def test_terminations_are_octax_terminations():
    """Longer, one game: brix loses its ball within ~20 random steps (terminated, a new game in the same step);
    its CHIP-8 draws random numbers (from the key of the reset) from the first step."""
    env = envhub.make("octax/brix")
    done, terminated = _assert_steps_are_octax_steps(env, jax.random.key(2), 30)
    assert terminated.sum() >= 1 and (done == terminated).all()


@pytest.mark.parametrize("name", ["deep", "space_flight10", "vertical_brix"])
def test_the_game_is_octaxs_own(name):
    """The game envhub steps is what octax's create_environment builds: same ROM, keys, score and end functions,
    settings (octax's defaults) and initial state (one game with a custom startup, a level, and one more)."""
    game, own = envhub.make(f"octax/{name}").unwrapped.octax_env, create_environment(name)[0]
    settings = ("rom_path", "score_fn", "terminated_fn", "startup_instructions", "custom_startup", "disable_delay")
    settings += ("max_num_steps_per_episodes", "instruction_frequency", "fps", "frame_skip", "color_scheme")
    assert [getattr(game, a) for a in settings] == [getattr(own, a) for a in settings]
    assert game.max_num_steps_per_episodes == DEFAULT_LIMIT and game.render_scale == 8
    _assert_equal((game.action_set, game.cached_reset_state), (own.action_set, own.cached_reset_state))


# --- errors, kwargs, time limit, render ------------------------------------------------------------


def test_action_outside_the_space_is_an_envhub_error():
    env = envhub.make("octax/pong")  # keys 1 and 4, and none: Discrete(3)
    state, _ = env.init(jax.random.key(0))
    with pytest.raises(ActionError, match=r"'octax/pong': 3 is outside \[0, 3\)"):
        env.step(jax.random.key(1), state, jnp.int32(3))


def test_kwargs_reach_the_game():
    env = envhub.make("octax/pong", frame_skip=2, instruction_frequency=1200, max_num_steps_per_episodes=9)
    game = env.unwrapped.octax_env
    assert (game.frame_skip, game.instructions_per_step, game.max_num_steps_per_episodes) == (2, 20, 9)
    assert env.observation_space == spaces.Box(False, True, (2, 64, 32), np.bool_)
    assert env.metadata["time_limit"] == 9 and env.metadata["keys"] == (1, 4)
    default = envhub.make("octax/rocket", max_episode_steps=None).unwrapped
    assert (default.time_limit, default.octax_env.max_num_steps_per_episodes) == (None, NO_LIMIT)
    assert envhub.make("octax/filter").metadata["time_limit"] == DEFAULT_LIMIT
    with pytest.raises(EnvKwargsError, match="rom_path"):
        envhub.make("octax/pong", rom_path="other.ch8")  # the id fixes it
    with pytest.raises(EnvKwargsError, match="color_scheme"):
        envhub.make("octax/pong", color_scheme="pink")


def test_time_limit_truncates_and_render_draws_the_display():
    env = envhub.make("octax/brix", num_envs=2, max_episode_steps=2, render_scale=2, color_scheme="amber")
    state, ts = env.init(jax.random.key(0))
    flags = []
    for i in range(4):
        state, ts = env.step(jax.random.key(i), state, jnp.array([0, 2], jnp.int32))
        flags.append(np.asarray(ts.truncated).tolist())
    assert flags == [[False, False], [True, True], [False, False], [True, True]]
    frames = env.render(state)
    assert frames.shape == (2, 64, 128, 3) and frames.dtype == np.uint8
    display = np.asarray(state.env.display[1]).T.repeat(2, 0).repeat(2, 1)  # (x, y) -> rows of y
    assert display.any()
    np.testing.assert_array_equal(frames[1][display], np.array([[255, 176, 0]] * display.sum(), np.uint8))
    assert not frames[1][~display].any()  # amber on black
    assert env.render(state, index=0).shape == (64, 128, 3)


def test_octax_imports_without_its_gui_modules(monkeypatch):
    """The workaround in games.import_octax: octax's __init__ imports cv2 and PIL (its gui extra) for helpers
    the plugin does not use; with both missing, octax imports, and cv2 and PIL stay missing afterwards."""
    for name in [m for m in sys.modules if m == "octax" or m == "octax.rendering"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "cv2", None)  # as if not installed: `import cv2` raises
    monkeypatch.setitem(sys.modules, "PIL", None)
    octax = import_octax()
    assert octax.chip8_display_to_rgb(np.ones((64, 32), bool), scale=1).shape == (32, 64, 3)
    assert sys.modules["cv2"] is None and sys.modules["PIL"] is None
    with pytest.raises(ModuleNotFoundError, match="pip install opencv-python"):
        octax.rendering.cv2.VideoWriter_fourcc  # noqa: B018
