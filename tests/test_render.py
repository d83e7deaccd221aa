"""``env.render`` (the checks every backend shares), ``envhub.record`` and ``envhub record``/``info``."""

from __future__ import annotations

import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_host import Walk

import envhub
from envhub.cli import EXIT_ENVHUB_ERROR, EXIT_OK, main
from envhub.errors import (
    ClosedEnvironmentError,
    InvalidArgumentError,
    MissingDependencyError,
    RenderError,
    StaleStateError,
)
from envhub.testing.toy_envs import Corridor
from envhub.wrappers import TimeLimit, VmapEnvironment

KEY = jax.random.key(0)


class PaintedCorridor(Corridor):
    """Corridor drawn as a 4 x (4 * (length + 1)) strip with the walker's cell white."""

    render_modes = ("rgb_array",)

    def _render(self, state, index):
        frame = np.zeros((4, 4 * (self.length + 1), 3), np.uint8)
        pos = int(state["pos"])
        frame[:, 4 * pos : 4 * pos + 4] = 255
        return frame


class PaintedWalk(Walk):
    render_modes = ("rgb_array",)

    def _host_render(self, host):
        frames = np.zeros((self._n, 2, 6, 3), np.uint8)
        for i, pos in enumerate(host.pos):
            frames[i, :, pos] = 200
        return frames


class PaintedPlugin:
    @envhub.hookimpl
    def envhub_register_envs(self, register):
        register("Painted-v0", PaintedCorridor, check_options={"time_limit_kwarg": "max_steps"})
        register("Plain-v0", Corridor)


@pytest.fixture
def painted():
    envhub.register_backend("painted", PaintedPlugin(), replace=True)
    yield
    envhub.unregister_backend("painted")


def test_render_gives_uint8_rgb_of_the_state_and_batches():
    env = PaintedCorridor()
    state, _ = env.init(KEY)
    frame = env.render(state)
    assert frame.shape == (4, 28, 3) and frame.dtype == np.uint8 and frame.var() > 0
    batched = VmapEnvironment(PaintedCorridor(), 3)
    states, _ = batched.init(KEY)
    frames = batched.render(states)
    assert frames.shape == (3, 4, 28, 3)
    np.testing.assert_array_equal(batched.render(states, index=2), frames[2])
    assert batched.render_modes == ("rgb_array",)


def test_wrappers_render_the_inner_state():
    env = TimeLimit(PaintedCorridor(), 5)
    state, _ = env.init(KEY)
    np.testing.assert_array_equal(env.render(state), PaintedCorridor().render(state.env_state))


def test_an_env_without_renderer_says_so():
    env = Corridor()
    state, _ = env.init(KEY)
    with pytest.raises(RenderError, match=r"Cannot render '<unregistered>': the Corridor backend has no renderer"):
        env.render(state)


def test_traced_closed_and_bad_index_are_refused():
    env = PaintedCorridor()
    state, _ = env.init(KEY)
    with pytest.raises(RenderError, match="the state is traced .* call env.render"):
        jax.jit(env.render)(state)
    with pytest.raises(InvalidArgumentError, match=r"index=0 .* not batched, so leave index out"):
        env.render(state, index=0)
    batched = VmapEnvironment(PaintedCorridor(), 2)
    with pytest.raises(InvalidArgumentError, match=r"index=2 .* use 0 <= index < 2"):
        batched.render(batched.init(KEY)[0], index=2)
    env.close()
    with pytest.raises(ClosedEnvironmentError, match=r"render\(\) called .* after close"):
        env.render(state)


def test_a_backend_returning_bad_frames_is_reported():
    class Gray(PaintedCorridor):
        def _render(self, state, index):
            return np.zeros((4, 4), np.float32)

    with pytest.raises(RenderError, match=r"returned float32\[4, 4\], not uint8 RGB of rank 3"):
        Gray().render(Gray().init(KEY)[0])


def test_host_env_renders_its_live_env_and_refuses_stale_states():
    env = PaintedWalk(num_envs=2)
    state, _ = env.init(KEY)
    new, _ = env.step(KEY, state, np.array([1, 1]))
    frames = env.render(new)
    assert frames.shape == (2, 2, 6, 3) and frames.var() > 0
    assert env.render(new, index=1).shape == (2, 6, 3)
    with pytest.raises(StaleStateError, match="was given a state from step 0, but its newest state is from step 1"):
        env.render(state)
    plain = Walk()
    with pytest.raises(RenderError, match="Walk has no renderer"):
        plain.render(plain.init(KEY)[0])
    env.close()
    with pytest.raises(ClosedEnvironmentError):
        env.render(new)


def test_record_gif_has_one_frame_per_state(tmp_path):
    iio = pytest.importorskip("imageio.v3", reason="GIF writing needs imageio (envhub[render])")
    env = PaintedCorridor(length=20, max_steps=50)
    ticks = []
    n = envhub.record(env, lambda k, obs: 1, KEY, 5, tmp_path / "run.gif", on_frame=lambda i, t: ticks.append((i, t)))
    frames = iio.imread(tmp_path / "run.gif", index=None)
    assert n == 6 and frames.shape[:3] == (6, 4, 84) and ticks[-1] == (6, 6)
    assert len({f.tobytes() for f in frames}) == 6  # the walker moved right every step


def test_record_host_env_steps_eagerly(tmp_path):
    iio = pytest.importorskip("imageio.v3", reason="GIF writing needs imageio (envhub[render])")
    env = PaintedWalk(num_envs=2)
    assert envhub.record(env, lambda k, obs: jnp.ones(2, jnp.int32), KEY, 3, tmp_path / "walk.gif", index=1) == 4
    assert iio.imread(tmp_path / "walk.gif", index=None).shape[1:3] == (2, 6)
    assert env.live_host_envs() == 1


def test_record_mp4(tmp_path):
    pytest.importorskip("imageio_ffmpeg", reason="MP4 writing needs imageio-ffmpeg (envhub[video])")
    iio = pytest.importorskip("imageio.v3")
    env = PaintedCorridor(length=20, max_steps=50)
    envhub.record(env, lambda k, obs: 1, KEY, 4, tmp_path / "run.mp4", fps=10)
    assert iio.imread(tmp_path / "run.mp4", index=None).shape[:3] == (5, 4, 84)


def test_record_bad_input(tmp_path, monkeypatch):
    env = PaintedCorridor()
    with pytest.raises(InvalidArgumentError, match=r"extension '\.avi', which envhub cannot write: use one of"):
        envhub.record(env, lambda k, obs: 1, KEY, 2, tmp_path / "run.avi")
    with pytest.raises(InvalidArgumentError, match=r"steps=0 for record: use an int >= 1"):
        envhub.record(env, lambda k, obs: 1, KEY, 0, tmp_path / "run.gif")
    with pytest.raises(RenderError, match=r"no HTML viewer \(only brax has one\); record to \.gif or \.mp4"):
        envhub.record(env, lambda k, obs: 1, KEY, 2, tmp_path / "run.html")
    monkeypatch.setitem(sys.modules, "imageio", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "imageio.v2", None)
    with pytest.raises(MissingDependencyError, match=r"Writing \.gif files needs .*'imageio'.*envhub\[render\]"):
        envhub.record(env, lambda k, obs: 1, KEY, 2, tmp_path / "run.gif")
    assert not (tmp_path / "run.gif").exists()


def test_cli_record_and_info(painted, tmp_path, capsys, monkeypatch):
    iio = pytest.importorskip("imageio.v3", reason="GIF writing needs imageio (envhub[render])")
    for var in ("SDL_AUDIODRIVER", "SDL_VIDEODRIVER", "PYGAME_HIDE_SUPPORT_PROMPT"):
        monkeypatch.delenv(var, raising=False)  # record sets them; restored after the test
    out = tmp_path / "episode.gif"
    code = main(["record", "painted/Painted-v0", "--steps", "3", "--out", str(out), "-k", "length=30"])
    captured = capsys.readouterr()
    assert code == EXIT_OK and "wrote 4 frames of painted/Painted-v0" in captured.out
    assert "4/4" in captured.err  # the progress bar
    assert iio.imread(out, index=None).shape[0] >= 2  # random walk: repeated frames merge in a GIF
    assert main(["record", "painted/Painted-v0", "--out", str(tmp_path / "x.webm")]) == EXIT_ENVHUB_ERROR
    assert "extension '.webm'" in capsys.readouterr().err
    assert main(["record", "painted/Plain-v0", "--steps", "1", "--out", str(out)]) == EXIT_ENVHUB_ERROR
    assert "has no renderer" in capsys.readouterr().err
    assert main(["info", "painted/Painted-v0", "-n", "2", "--json"]) == EXIT_OK
    info = json.loads(capsys.readouterr().out)
    assert info["render_modes"] == ["rgb_array"] and info["runs_on"] == "device (pure JAX)"
    assert info["single_action_space"].startswith("Discrete(2") and "shape=(2,)" in info["action_space"]
    assert info["backend"].startswith("<in-process>") and info["time_limit"] is None


def test_use_egl_when_headless_only_before_mujoco_is_imported(monkeypatch):
    import ctypes.util

    from envhub.tools.render import use_egl_when_headless

    monkeypatch.setattr(ctypes.util, "find_library", lambda name: f"lib{name}.so.1")  # an EGL library is there

    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delitem(sys.modules, "mujoco", raising=False)
    use_egl_when_headless()
    assert os.environ["MUJOCO_GL"] == "egl"
    monkeypatch.setenv("MUJOCO_GL", "osmesa")  # the user's choice stays
    use_egl_when_headless()
    assert os.environ["MUJOCO_GL"] == "osmesa"
    monkeypatch.delenv("MUJOCO_GL")
    monkeypatch.setitem(sys.modules, "mujoco", object())  # too late: mujoco has picked its platform
    use_egl_when_headless()
    assert "MUJOCO_GL" not in os.environ
    monkeypatch.delitem(sys.modules, "mujoco")
    monkeypatch.setenv("DISPLAY", ":0")  # a display: mujoco's default works
    use_egl_when_headless()
    assert "MUJOCO_GL" not in os.environ


def test_use_egl_when_headless_leaves_mujoco_alone_without_an_egl_library(monkeypatch):
    import ctypes.util

    from envhub.tools.render import use_egl_when_headless

    monkeypatch.setattr(sys, "platform", "linux")
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delitem(sys.modules, "mujoco", raising=False)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)  # no libEGL: egl would break mujoco's import
    use_egl_when_headless()
    assert "MUJOCO_GL" not in os.environ


def test_writing_mp4_after_jax_started_warns_nothing(tmp_path):
    """imageio-ffmpeg forks ffmpeg with a ``preexec_fn``, which runs JAX's and envhub's at-fork warnings (false
    alarms: the child only execs ffmpeg); ``envhub record --out x.mp4`` printed both."""
    pytest.importorskip("imageio_ffmpeg", reason="MP4 writing needs imageio-ffmpeg (envhub[video])")
    import warnings

    from envhub.tools.render import _writer

    jnp.zeros(1).block_until_ready()  # JAX's threads have started: the at-fork hooks would warn
    frames = [np.full((5, 7, 3), 40 * i, np.uint8) for i in range(3)]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        _writer(".mp4")(tmp_path / "a.mp4", frames, 30)
    assert [f"{w.category.__name__}: {w.message}" for w in seen] == []
    assert (tmp_path / "a.mp4").stat().st_size > 0
