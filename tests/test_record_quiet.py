"""``envhub record`` on a headless machine prints only its own lines: SDL's drivers default to ``dummy``."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from envhub.tools.render import use_silent_sdl_drivers

SDL_VARS = ("SDL_AUDIODRIVER", "SDL_VIDEODRIVER", "PYGAME_HIDE_SUPPORT_PROMPT")


def _record(tmp_path, name, **env):
    """Start ``envhub record gymnasium/CartPole-v1`` (pygame draws it) with no display and ``env`` added."""
    headless = {
        k: v for k, v in os.environ.items() if k not in {"DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", *SDL_VARS}
    }
    cmd = [sys.executable, "-m", "envhub", "record", "gymnasium/CartPole-v1", "--steps", "2"]
    return subprocess.Popen(
        [*cmd, "--out", str(tmp_path / f"{name}.gif")],
        env={**headless, "ENVHUB_PLUGINS": "gymnasium", **env},
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_record_prints_only_its_own_lines_and_keeps_the_users_sdl_driver(tmp_path):
    pytest.importorskip("pygame", reason="gymnasium's CartPole draws with pygame")
    pytest.importorskip("imageio", reason="GIF writing needs imageio (envhub[render])")
    audio = tmp_path / "audio.raw"
    default = _record(tmp_path, "default")  # both at once: each is mostly import time
    chosen = _record(tmp_path, "chosen", SDL_AUDIODRIVER="disk", SDL_DISKAUDIOFILE=str(audio))
    out, err = default.communicate(timeout=60)
    assert default.returncode == 0, err
    assert out == f"wrote 3 frames of gymnasium/CartPole-v1 (random policy) to {tmp_path / 'default.gif'}\n"
    noise = [line for line in re.split(r"[\r\n]", err) if line and not line.startswith("drawing [")]
    assert noise == []  # before: "error: XDG_RUNTIME_DIR is invalid ..." and nine "ALSA lib ..." lines
    chosen_out, chosen_err = chosen.communicate(timeout=60)
    assert chosen.returncode == 0, chosen_err
    assert audio.exists()  # SDL opened the user's disk driver, not envhub's dummy
    assert "ALSA" not in chosen_err and "XDG_RUNTIME_DIR" not in chosen_err


def test_a_variable_the_user_set_wins(monkeypatch):
    for var in (*SDL_VARS, "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SDL_AUDIODRIVER", "alsa")
    monkeypatch.setenv("DISPLAY", ":0")  # a display: SDL picks its own video driver
    use_silent_sdl_drivers()
    assert os.environ["SDL_AUDIODRIVER"] == "alsa" and "SDL_VIDEODRIVER" not in os.environ
    monkeypatch.delenv("DISPLAY")
    use_silent_sdl_drivers()
    assert os.environ["SDL_VIDEODRIVER"] == "dummy"
