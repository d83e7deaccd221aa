"""envhub-jaxatari: the conformance kit on a representative game, and ground truth against jaxtari itself (the
same keys and actions give jaxtari's values).

Every jaxtari game loads its sprite pack when it is built, and that pack is a download (Google Drive) this
project's machines cannot reach. Where it is not installed, these tests build the games on placeholder sprites
(``placeholder_sprites.txt``: each file the games of jaxtari 0.2.0 load, a flat-coloured stand-in of the right
size) in a temporary XDG_DATA_HOME: the game logic is jaxtari's, but what reads sprite pixels (a few collision
maps) sees flat colours, so the check is of envhub's mapping, not of the Atari game. Seven games cannot be built
on placeholders (PLACEHOLDER_FAILS); they are tested only where the real pack is installed.

Compiling a game's step takes 0.2 s (freeway) to 25 s (beamrider, othello) on 2 CPU cores, and the kit's programs
of one game 0.5-2 minutes (well over an hour for all 63): the ground truth runs on GROUND_TRUTH_GAMES and the kit
on pong; ENVHUB_FULL_KIT=1 runs both on every game.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from envhub_jaxatari.environment import NO_LIMIT, as_tree
from jaxtari.core import list_available_games
from jaxtari.paths import ownership_or_alt_markers_present

import envhub
from envhub import testing
from envhub.plugin import ActionError, EnvKwargsError, EnvUnavailableError, spaces

IDS = [f"jaxatari/{name}" for name in list_available_games()]
FULL_KIT = os.environ.get("ENVHUB_FULL_KIT") == "1"
REAL_SPRITES = ownership_or_alt_markers_present()

# Games whose placeholders jaxtari refuses when it builds them (they need real sprite sizes or colours).
PLACEHOLDER_FAILS = {
    "alien": "a collision map must be 205x152",
    "videocube": "it loads score digits by names the placeholder list lacks",
    "gopher": "its renderer looks up a colour of the real sprites",
    "gravitar": "a sprite of the real pack is read at import",
    "upndown": "its level backgrounds are found by listing the real pack",
    "venture": "its rooms must be full-screen sprites",
    "videochess": "its board sprite is transposed",
    "wizardofwor": "its maze sprites are 420x190",
}
# Quick games (a step compiles in < 2 s) that stand for the others by default.
GROUND_TRUTH_GAMES = ("pong", "freeway", "breakout")


@pytest.fixture(scope="module", autouse=True)
def sprites(tmp_path_factory):
    """jaxtari's sprite pack: the installed one, else placeholders in a temporary XDG_DATA_HOME."""
    if REAL_SPRITES:
        yield
        return
    root = tmp_path_factory.mktemp("xdg_data")
    write_placeholder_pack(root / "jaxtari")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(root))
        yield


def write_placeholder_pack(storage: Path, version: int = 1) -> None:
    """Every sprite of ``placeholder_sprites.txt`` (``dir name[:HxW] ...``, URL-quoted; 8x8 unless given), flat grey RGBA, and
    the marker and version jaxtari looks for (an alternative pack: no ownership of the ROMs is claimed)."""
    sprites = storage / "sprites"
    for line in (Path(__file__).parent / "placeholder_sprites.txt").read_text().splitlines():
        folder, *names = map(unquote, line.split())
        (sprites / folder).mkdir(parents=True, exist_ok=True)
        for entry in names:
            name, _, size = entry.rpartition(":") if ":" in entry else (entry, "", "")
            height, width = map(int, size.split("x")) if size else (8, 8)
            np.save(sprites / folder / f"{name}.npy", np.full((height, width, 4), 200, np.uint8))
    (storage / ".alternative_sprites_installed").touch()
    (sprites / ".version").write_text(f"{version}\n")


def runs_here(env_id: str) -> bool:
    return REAL_SPRITES or env_id.split("/", 1)[1] not in PLACEHOLDER_FAILS


def test_every_jaxatari_game_is_listed():
    assert [s.id for s in envhub.list_envs("jaxatari")] == sorted(IDS, key=str.lower)
    assert len(IDS) == 70 and all(s.available for s in envhub.list_envs("jaxatari"))


# --- the conformance kit ----------------------------------------------------------------------------

KIT_GAMES = ("pong",)

for _env_id in [i for i in IDS if runs_here(i)] if FULL_KIT else [f"jaxatari/{n}" for n in KIT_GAMES]:
    _name = "TestKit_" + _env_id.split("/", 1)[1]
    globals()[_name] = type(_name, (testing.ConformanceTests,), {"env_id": _env_id, "__module__": __name__})


# --- ground truth: envhub and jaxtari side by side ----------------------------------------------------


def _traced_rollout(env, key, num_steps):
    """Inside a trace: a rollout of random actions; the first TimeStep, then per step the state before, the step
    key, the action and the TimeStep."""

    def body(state, k):
        action = env.action_space.sample(jax.random.fold_in(k, 1))
        new, ts = env.step(k, state, action)
        return new, (state, k, action, ts)

    state, first = env.init(key)
    return first, jax.lax.scan(body, state, jax.random.split(jax.random.fold_in(key, 1), num_steps))[1]


def _jaxtari_side_by_side(game, before, keys, actions, num_envs):
    """Inside a trace: jaxtari's own step of envhub's state before each step (same action), and jaxtari's reset
    with the per-env keys envhub resets with (reset_spares=False: the second half of each step key, split)."""
    reset_keys = jax.vmap(lambda k: jax.random.split(jax.random.split(k)[1], num_envs))(keys)
    obs, state, reward, done, _ = jax.vmap(jax.vmap(game.step))(before.env, actions)
    first_obs, _ = jax.vmap(jax.vmap(game.reset))(jax.random.key_data(reset_keys))  # jaxtari's raw keys
    return as_tree(obs), reward, done, as_tree(first_obs)


def _assert_equal(a, b, where=None):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        x, y = np.asarray(x), np.asarray(y)
        np.testing.assert_array_equal(x if where is None else x[where], y if where is None else y[where])


@pytest.mark.parametrize(
    "env_id", [i for i in IDS if FULL_KIT or i.split("/", 1)[1] in GROUND_TRUTH_GAMES], ids=lambda i: i.split("/")[1]
)
def test_every_game_steps_as_jaxtari_steps(env_id):
    """Ground truth in one compiled program per game: envhub's rollout of 2 games with a time limit of 3 next to
    jaxtari's step of each state before (same action) and jaxtari's reset with envhub's reset keys. Also:
    observations in the space, one structure from init and step, an end every 3 steps at the latest."""
    if not runs_here(env_id):
        pytest.skip(f"{env_id} cannot be built on placeholder sprites ({PLACEHOLDER_FAILS[env_id.split('/')[1]]})")
    env = envhub.make(env_id, num_envs=2, max_episode_steps=3, reset_spares=False)
    game, space = env.unwrapped.game, env.observation_space

    @jax.jit
    def run(key):
        first, (before, keys, actions, ts) = _traced_rollout(env, key, 7)
        inside = jax.vmap(lambda t: space.contains(t.obs) & space.contains(t.final_obs))(ts)
        return first, ts, inside & space.contains(first.obs), _jaxtari_side_by_side(game, before, keys, actions, 2)

    first, ts, inside, (reached, reward, terminated, first_games) = run(jax.random.key(0))
    assert bool(inside.all()), f"{env_id}: an observation outside {space}"
    assert jax.tree.structure(first) == jax.tree.structure(jax.tree.map(lambda x: x[0], ts))
    assert ts.reward.dtype == jnp.float32 and ts.reward.shape == (7, 2)
    _assert_equal(ts.final_obs, reached)
    np.testing.assert_array_equal(ts.reward, np.asarray(reward, np.float32))
    done = np.asarray(terminated, bool)
    np.testing.assert_array_equal(ts.terminated, done)
    limit = np.array([0, 0, 1, 0, 0, 1, 0], bool)[:, None]  # the episodes that ran 3 steps (none ended earlier)
    ended = np.asarray(ts.done)
    assert ended[:3].any(axis=0).all() and ended[3:6].any(axis=0).all()  # every game ends within 3 steps
    if not done.any():
        np.testing.assert_array_equal(ts.truncated, np.broadcast_to(limit, (7, 2)))
    assert not np.asarray(ts.truncated & ts.terminated).any()
    _assert_equal(ts.obs, reached, ~ended)  # no game ended: what the step reached
    _assert_equal(ts.obs, first_games, ended)  # a game ended: jaxtari's reset with envhub's key, same step


def test_action_outside_the_space_is_an_envhub_error():
    env = envhub.make("jaxatari/pong")
    state, _ = env.init(jax.random.key(0))
    with pytest.raises(ActionError, match=r"'jaxatari/pong': 6 is outside \[0, 6\)"):
        env.step(jax.random.key(1), state, jnp.int32(6))


def test_spaces_observations_and_frames():
    """Objects by default (a dict per object, the dtypes jaxtari returns), the drawn frame with obs_type="pixels",
    which is also what render draws."""
    env = envhub.make("jaxatari/pong")
    assert env.single_action_space == spaces.Discrete(6, dtype=np.int32)
    obs = env.single_observation_space.spaces
    assert sorted(obs) == ["ball", "enemy", "player", "score_enemy", "score_player"]
    assert sorted(obs["ball"]) == ["active", "height", "orientation", "state", "visual_id", "width", "x", "y"]
    pixels = envhub.make("jaxatari/pong", num_envs=2, obs_type="pixels")
    assert pixels.single_observation_space == spaces.Box(0, 255, (210, 160, 3), np.uint8)
    state, ts = pixels.init(jax.random.key(0))
    frames = pixels.render(state)
    assert frames.shape == (2, 210, 160, 3) and frames.dtype == np.uint8
    np.testing.assert_array_equal(frames, ts.obs)
    np.testing.assert_array_equal(pixels.render(state, index=1), ts.obs[1])


def test_kwargs_reach_the_game():
    modded = envhub.make("jaxatari/pong", mods=["zero_score"]).unwrapped.game
    # jaxtari's mod wrapper around its pong controller, with the mod in its steps
    assert type(modded).__name__ == "JaxtariModWrapper" and type(modded._env).__name__ == "PongEnvMod"
    assert [type(run.__self__).__name__ for run in modded.post_step_mods] == ["AlwaysZeroScoreMod"]
    with pytest.raises(EnvKwargsError, match="mode"):
        envhub.make("jaxatari/pong", mode=1)  # jaxtari.make takes it but no game reads it
    with pytest.raises(EnvKwargsError, match=r"obs_type='rgb'.*'objects' | 'pixels'"):
        envhub.make("jaxatari/pong", obs_type="rgb")


def test_a_game_time_limit_is_envhubs_truncation():
    """Skiing ends after 5 minutes of play in jaxtari's done; envhub truncates there instead (or at max_episode_steps)."""
    skiing = envhub.make("jaxatari/skiing")
    assert skiing.max_episode_steps == 18_000 and skiing.unwrapped.game.consts.max_steps == NO_LIMIT
    assert envhub.make("jaxatari/skiing", max_episode_steps=50).max_episode_steps == 50


def test_missing_sprites_are_an_envhub_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    if ownership_or_alt_markers_present():
        pytest.skip("a sprite pack is installed outside XDG_DATA_HOME")
    with pytest.raises(EnvUnavailableError, match=r"'jaxatari/pong'.*sprite pack is not installed.*install-sprites"):
        envhub.make("jaxatari/pong")
    # the folder jaxtari installs into, $XDG_DATA_HOME/jaxtari here (not ~/.local/share/jaxtari)
    with pytest.raises(EnvUnavailableError, match=re.escape(f"into {tmp_path / 'jaxtari'}")):
        envhub.make("jaxatari/pong")


class _NoStdin:
    """A stdin that fails the test when read (jaxtari's question would read it)."""

    def readline(self, *args):
        raise AssertionError("make read stdin")

    read = readline


@pytest.fixture(scope="module")
def _old_pack_home(tmp_path_factory):
    if REAL_SPRITES:
        pytest.skip("a sprite pack is installed outside XDG_DATA_HOME: jaxtari would use that one")
    root = tmp_path_factory.mktemp("old_pack")
    write_placeholder_pack(root / "jaxtari", version=0)
    return root


@pytest.fixture
def old_pack(_old_pack_home, monkeypatch):
    """A sprite pack older than jaxtari wants (version 0), in its own XDG_DATA_HOME: jaxtari.make would ask."""
    monkeypatch.setenv("XDG_DATA_HOME", str(_old_pack_home))
    monkeypatch.delenv("JAXTARI_SKIP_SPRITE_UPDATE", raising=False)
    return _old_pack_home


def test_an_old_sprite_pack_builds_without_a_question(old_pack, monkeypatch, capsys):
    """No console question (jaxtari's, which reads stdin) but a warning naming the installer; the pack is used, the
    environment variable that turns the question off is set only during the call, nothing is written."""
    monkeypatch.setattr(sys, "stdin", _NoStdin())
    with pytest.warns(UserWarning, match=r"jaxatari/pong: jaxtari's sprite pack in .* is version 0, .*install-sprites"):
        env = envhub.make("jaxatari/pong")
    assert env.single_action_space == spaces.Discrete(6, dtype=np.int32)
    assert "[y/N]" not in capsys.readouterr().out and "JAXTARI_SKIP_SPRITE_UPDATE" not in os.environ
    assert not (old_pack / "jaxtari" / ".sprite_update_declined").exists()


@pytest.mark.parametrize("stdin", ["closed", "silent pipe"])
def test_make_never_reads_stdin(old_pack, stdin):
    """In a new process (jaxtari's question is asked at each make): stdin closed, or a pipe that never answers
    (where make used to hang), make succeeds at once."""
    code = "import envhub; envhub.make('jaxatari/pong'); print('MADE')"
    with subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL if stdin == "closed" else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=90) if stdin == "closed" else _never_answer(proc)
        finally:
            proc.kill()
    assert proc.returncode == 0 and out.strip().endswith("MADE"), err[-2000:]
    assert "[y/N]" not in out


def _never_answer(proc):
    """Wait for ``proc`` with its stdin pipe kept open and silent (communicate would close it)."""
    try:
        proc.wait(timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail("envhub.make waited on stdin (jaxtari's sprite update question)")
    return proc.stdout.read(), proc.stderr.read()
