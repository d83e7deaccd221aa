"""Long CLI steps show ``compiling ... N s`` on stderr (a terminal: in place, cleared; a log: a line now and then)."""

from __future__ import annotations

import io
import json
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


class _FakeClock:
    """``progress._clock``: one second later at each reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_a_bar_in_a_log_is_a_line_at_most_every_15_s_and_the_last_one(monkeypatch):
    monkeypatch.setattr(progress, "_clock", _FakeClock())
    log, terminal = io.StringIO(), _Terminal()
    for stream in (log, terminal):
        bar = progress.Bar("drawing", 40, width=4, stream=stream)
        for done in range(1, 41):  # one update a second
            bar.update(done)
    assert log.getvalue().splitlines() == ["drawing [#...] 16/40", "drawing [###.] 31/40", "drawing [####] 40/40"]
    assert "\r" not in log.getvalue()
    assert terminal.getvalue().count("\r") == 40 and terminal.getvalue().endswith("\rdrawing [####] 40/40\n")


def test_bench_and_record_write_no_carriage_returns_into_a_log(monkeypatch, capsys, tmp_path):
    pytest.importorskip("imageio", reason="GIF writing needs imageio (envhub[render])")
    monkeypatch.setattr(progress, "_clock", _FakeClock(), raising=False)
    envhub.register_backend("prog", Plugin(), replace=True)
    try:
        assert main(["bench", "prog/Painted-v0", "--steps", "2", "--repeats", "40"]) == EXIT_OK
        bench_err = capsys.readouterr().err
        assert main(["record", "prog/Painted-v0", "--steps", "40", "--out", str(tmp_path / "e.gif")]) == EXIT_OK
        record_err = capsys.readouterr().err
    finally:
        envhub.unregister_backend("prog")
    assert "\r" not in bench_err + record_err
    repeats = [line.split("] ")[1] for line in bench_err.splitlines() if line.startswith("num_envs=1 ")]
    frames = [line.split("] ")[1] for line in record_err.splitlines() if line.startswith("drawing [")]
    assert repeats == ["16/40", "31/40", "40/40"] and frames == ["16/41", "31/41", "41/41"]


class SlowTrace(Painted):
    """Its step takes 0.3 s to trace: the first call of a jitted rollout (``COMPILE_S``) is slow."""

    def _step(self, key, state, action):
        time.sleep(0.3)
        return super()._step(key, state, action)


class SlowTracePlugin:
    @envhub.hookimpl
    def envhub_register_envs(self, register):
        register("SlowTrace-v0", SlowTrace)


def test_bench_names_making_apart_from_the_compile_its_table_reports(monkeypatch, capsys):
    monkeypatch.setattr(progress, "LOG_EVERY_S", 0.05)
    make = envhub.make

    def slow_make(*args, **kwargs):  # as importing a backend library on the first make
        time.sleep(0.5)
        return make(*args, **kwargs)

    monkeypatch.setattr(envhub, "make", slow_make)
    envhub.register_backend("prog", SlowTracePlugin(), replace=True)
    try:
        assert main(["bench", "prog/SlowTrace-v0", "--steps", "2", "--repeats", "1", "--json"]) == EXIT_OK
    finally:
        envhub.unregister_backend("prog")
    captured = capsys.readouterr()
    compile_s = json.loads(captured.out)["results"][0]["compile_s"]
    lines = captured.err.splitlines()
    making = [float(line.split(" ... ")[1][:-2]) for line in lines if line.startswith("making prog/SlowTrace-v0 ")]
    compiling = [float(line.split(" ... ")[1][:-2]) for line in lines if line.startswith("compiling num_envs=1 ... ")]
    assert making and compiling, captured.err
    assert max(compiling) <= compile_s + 0.05, (compile_s, captured.err)  # the same span, shown as it runs
