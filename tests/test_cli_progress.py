"""Long CLI steps show ``compiling ... N s`` on stderr (a terminal: in place, cleared; a log: a line now and then)."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest

import envhub
from envhub.cli import EXIT_OK, main, progress
from envhub.testing.toy_envs import Corridor


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_sees_the_step_and_its_seconds_then_a_clean_line(monkeypatch):
    monkeypatch.setattr(progress, "GRACE_S", 0.05)
    out = _Terminal()
    with progress.Ticker("compiling num_envs=4", stream=out):
        time.sleep(0.5)
    text = out.getvalue()
    assert "\r\x1b[Kcompiling num_envs=4 ... 0." in text and text.endswith("\r\x1b[K")  # updated, then cleared
    assert text.count("compiling") >= 2
    quiet, fast = _Terminal(), _Terminal()
    with progress.Ticker("compiling", stream=quiet, quiet=True):
        time.sleep(0.15)
    with progress.Ticker("compiling", stream=fast):
        pass  # shorter than the grace: an error after it stays the only line
    assert quiet.getvalue() == fast.getvalue() == ""


def test_a_log_gets_whole_lines_only_when_a_step_is_long(monkeypatch):
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.1)
    out = io.StringIO()
    with progress.Ticker("compiling the rollout", stream=out) as ticker:
        time.sleep(0.25)
        ticker.phase("drawing")
        time.sleep(0.15)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("compiling the rollout ... 0.") and lines[-1].startswith("drawing ... 0.")
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


class Painted(Corridor):
    render_modes = ("rgb_array",)

    def _render(self, state, index):
        return np.zeros((4, 4, 3), np.uint8)


class Plugin:
    @envhub.hookimpl
    def envhub_register_envs(self, register):
        register("Painted-v0", Painted)


@pytest.fixture
def slow(monkeypatch):
    """Progress every 50 ms; ``slow(module, name)`` makes that function take 0.3 s longer (a slow compile)."""
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.05)
    envhub.register_backend("prog", Plugin(), replace=True)

    def slower(owner, name):
        real = getattr(owner, name)

        def wait_then_run(*args, **kwargs):
            time.sleep(0.3)
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, wait_then_run)

    yield slower
    envhub.unregister_backend("prog")


def test_bench_shows_compiling_then_the_bar(slow, capsys):
    from envhub.tools import bench

    slow(bench, "measure")
    argv = ["bench", "prog/Painted-v0", "-n", "1,2", "--steps", "5", "--repeats", "2"]
    assert main(argv) == EXIT_OK
    err = capsys.readouterr().err
    assert err.index("compiling num_envs=1 ... ") < err.index("num_envs=1      [") < err.index("compiling num_envs=2")
    assert main([*argv[:2], "--steps", "5", "--repeats", "1", "-q"]) == EXIT_OK and capsys.readouterr().err == ""


def test_record_shows_compiling_then_the_bar(slow, capsys, tmp_path):
    pytest.importorskip("imageio", reason="GIF writing needs imageio (envhub[render])")
    slow(envhub, "record")
    assert main(["record", "prog/Painted-v0", "--steps", "3", "--out", str(tmp_path / "e.gif")]) == EXIT_OK
    err = capsys.readouterr().err
    assert err.index("compiling the rollout of prog/Painted-v0 ... ") < err.index("drawing [")
