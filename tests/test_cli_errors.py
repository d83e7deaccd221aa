"""Adversarial command lines: each bad value is one line on stderr, exit 2 (usage) or 3 (envhub error), no
traceback, and nothing slow runs first (``envhub.make`` and ``envhub.record`` are never reached)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fake_dists import write_dist

import envhub
from envhub.cli import EXIT_ENVHUB_ERROR, EXIT_INTERNAL_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, main
from envhub.cli.cmd_record import render_install_line
from envhub.testing.toy_envs import Corridor


class Painted(Corridor):
    render_modes = ("rgb_array",)

    def _render(self, state, index):
        return np.zeros((4, 4, 3), np.uint8)


class NeedsPygame(Painted):
    def _render(self, state, index):
        raise ModuleNotFoundError("No module named 'pygame'", name="pygame")


class Crashes(Corridor):
    """A plugin's bug: its init raises what no envhub rule expects."""

    def _init(self, key):
        raise RuntimeError("a bug in the plugin's init")


class Plugin:
    @envhub.hookimpl
    def envhub_register_envs(self, register):
        register("Corridor-v0", Corridor)
        register("Painted-v0", Painted)
        register("NeedsPygame-v0", NeedsPygame)
        register("Crashes-v0", Crashes)


@pytest.fixture
def rec():
    envhub.register_backend("rec", Plugin(), replace=True)
    yield
    envhub.unregister_backend("rec")


def _nothing_slow(monkeypatch):
    def slow(*args, **kwargs):
        raise AssertionError("reached the slow part")

    monkeypatch.setattr(envhub, "make", slow)
    monkeypatch.setattr(envhub, "record", slow)


def _one_line(capsys, code, expected):
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("envhub") and "Traceback" not in captured.err, captured.err
    assert captured.out == "" and expected in lines[0], lines[0]
    return lines[0]


def _read_only_folder() -> Path:
    """A folder no file can be created in, even by root (sysfs), or a skip."""
    import tempfile

    for folder in (Path("/sys"), Path("/proc")):
        try:
            with tempfile.TemporaryFile(dir=folder):
                pass
        except OSError:
            return folder
    pytest.skip("no folder this user cannot write in")


@pytest.mark.parametrize(
    "argv,code,message",
    [
        (["record", "rec/Painted-v0", "--out", "{tmp}/missing/e.gif"], 3, "does not exist; create it first (mkdir -p"),
        (["record", "rec/Painted-v0", "--out", "{tmp}/afile/e.gif"], 3, "afile' is a file, not a folder"),
        (["record", "rec/Painted-v0", "--out", "{ro}/e.gif"], 3, "cannot write in the folder"),
        (["record", "rec/Painted-v0", "--out", "{tmp}/e.txt"], 3, "cannot write the extension '.txt'; end the name"),
        (["record", "rec/Painted-v0", "--out", "{tmp}"], 3, "the name has no extension; end the name with one of"),
        (["record", "rec/Painted-v0", "--out", "{tmp}/folder.gif"], 3, "folder.gif' is a folder; name a file in it"),
        (["record", "rec/Painted-v0", "--out", "{tmp}/e.gif", "--steps", "-1"], 2, "--steps: '-1' is not a positive"),
        (["record", "rec/Painted-v0", "--out", "{tmp}/e.gif", "--fps", "0"], 2, "--fps: '0' is not a positive int"),
        (["record", "rec/Painted-v0", "--out", "{tmp}/e.gif", "--seed", "1" + "0" * 30], 2, "from 0 to 2**63 - 1"),
        (["record", "rec/Painted-v0", "--out", "{tmp}/e.gif", "--index", "3"], 2, "--index 3 is out of range: it"),
        (["record", "rec/Painted-v0", "--out", "{tmp}/e.gif", "-n", "2", "--index", "2"], 2, "use 0 <= INDEX < 2"),
        (["record", "rec/Painted-v0", "--out", "{tmp}/e.gif", "-n", "0"], 2, "'0' is not a positive int"),
        (["info", "rec/Painted-v0", "-k", "num_envs=2"], 2, "--kwarg 'num_envs=2': use -n N"),
        (["info", "rec/Painted-v0", "-k", "mesh=1"], 2, "call envhub.make(ID, mesh=...) in Python"),
        (["bench", "rec/Painted-v0", "--steps", "0"], 2, "argument --steps: '0' is not a positive int"),
        (
            ["bench", "rec/Painted-v0", "--steps", "99999999999"],
            2,
            "--steps: '99999999999' is not an int from 1 to 2**31 - 1",
        ),
        (
            ["record", "rec/Painted-v0", "--out", "{tmp}/e.gif", "--steps", "2147483648"],
            2,
            "--steps: '2147483648' is not an int from 1 to 2**31 - 1",
        ),
        (["bench", "rec/Painted-v0", "--repeats", "-1"], 2, "argument --repeats: '-1' is not a positive int"),
        (["bench", "rec/Painted-v0", "-n", "1,,2"], 2, "--num-envs '1,,2' must be comma-separated positive ints"),
        (["bench", "rec/Painted-v0", "--json", "{tmp}/missing/b.json"], 3, "--json '"),
        (["bench", "rec/Painted-v0", "--plot", "{tmp}/b.txt"], 3, "end the name with one of .png, .svg, .pdf"),
        (["check", "rec/Painted-v0", "--only", ","], 2, "--only ',' names no check; the checks are: spaces"),
        (["check", "rec/Painted-v0", "--only", "init,jitt"], 2, "--only 'jitt' is not a check"),
        (["new-plugin", "mine", "--dir", "{tmp}/afile/mine"], 3, "afile' is a file, not a folder"),
        (["new-plugin", "mine", "--dir", "{ro}/mine"], 3, "cannot write in the folder"),
        (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_values_are_one_line_before_any_work(rec, tmp_path, capsys, monkeypatch, argv, code, message):
    (tmp_path / "afile").write_text("")
    (tmp_path / "folder.gif").mkdir()
    ro = str(_read_only_folder()) if any("{ro}" in a for a in argv) else ""
    _nothing_slow(monkeypatch)
    argv = [a.format(tmp=tmp_path, ro=ro) for a in argv]
    assert main(argv) == code
    _one_line(capsys, code, message)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["afile", "folder.gif"]  # nothing written


def test_an_env_without_a_renderer_says_how_to_save_observations_before_the_rollout(rec, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(envhub, "record", lambda *a, **k: pytest.fail("the rollout ran"))
    argv = ["record", "rec/Corridor-v0", "--out", str(tmp_path / "e.gif"), "-n", "2", "-k", "length=9", "--seed", "4"]
    assert main(argv) == EXIT_ENVHUB_ERROR
    line = _one_line(capsys, 3, "Cannot render 'rec/Corridor-v0': it has no renderer")
    assert "envhub.make('rec/Corridor-v0', num_envs=2, length=9)" in line and "jax.random.key(4), 200)" in line
    assert "numpy.savez('obs.npz', *jax.tree.leaves(t.obs))" in line
    assert main(["record", "rec/Painted-v0", "--out", str(tmp_path / "e.html")]) == EXIT_ENVHUB_ERROR
    _one_line(capsys, 3, "it has no HTML viewer (only brax has one); record to .gif or .mp4 instead")


def test_a_missing_drawing_library_gives_its_install_line_before_the_rollout(rec, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(envhub, "record", lambda *a, **k: pytest.fail("the rollout ran"))
    assert main(["record", "rec/NeedsPygame-v0", "--out", str(tmp_path / "e.gif")]) == EXIT_ENVHUB_ERROR
    needs = "Drawing rec/NeedsPygame-v0 needs the Python package 'pygame', which is not installed; install it with: "
    _one_line(capsys, 3, needs + "pip install pygame")


def test_the_install_line_is_the_plugins_render_extra(site):
    write_dist(site, "fake-plugin-draw", {"fakedraw": "fake_plugin_draw"}, {"fake_plugin_draw": ""})
    metadata = next(site.glob("fake_plugin_draw-*")) / "METADATA"
    metadata.write_text(metadata.read_text() + "Provides-Extra: render\n")
    assert render_install_line("fakedraw", "pygame") == 'pip install "fake-plugin-draw[render]"'
    assert render_install_line("nosuchprefix", "pygame.display") == "pip install pygame"


@pytest.mark.requires_plugin("gymnax")
def test_gymnax_names_its_render_extra():
    assert render_install_line("gymnax", "pygame") == 'pip install "envhub-gymnax[render]"'


def test_ctrl_c_is_one_line_and_exit_130(capsys, monkeypatch):
    from envhub.cli import COMMANDS

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(COMMANDS["list"], "run", interrupted)
    assert main(["list"]) == EXIT_INTERRUPTED
    err = capsys.readouterr().err
    assert err.strip() == "envhub: interrupted (KeyboardInterrupt)"


def test_an_unexpected_exception_is_one_line_and_exit_3_with_the_traceback_on_request(rec, capsys, monkeypatch):
    monkeypatch.delenv("ENVHUB_TRACEBACK", raising=False)
    assert main(["info", "rec/Crashes-v0"]) == EXIT_INTERNAL_ERROR
    line = _one_line(capsys, EXIT_INTERNAL_ERROR, "envhub: internal error: RuntimeError: a bug in the plugin's init")
    assert line.endswith("(run with --traceback / ENVHUB_TRACEBACK=1 for details; please report)")
    for argv, environ in ((["info", "rec/Crashes-v0", "--traceback"], "0"), (["--traceback", "info", "rec/Crashes-v0"], ""),
                          (["info", "rec/Crashes-v0"], "1")):  # fmt: skip
        monkeypatch.setenv("ENVHUB_TRACEBACK", environ)
        assert main(argv) == EXIT_INTERNAL_ERROR
        err = capsys.readouterr().err
        assert "Traceback (most recent call last)" in err and "in _init" in err  # jax 0.6 chains its own first
        assert err.splitlines()[-1] == (
            "envhub: internal error: RuntimeError: a bug in the plugin's init (the traceback is above; please report)"
        )
    assert main(["info", "rec/Nope-v0"]) == EXIT_ENVHUB_ERROR  # ENVHUB_TRACEBACK=1: an envhub error's too
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and err.splitlines()[-1].startswith("envhub: error: Backend 'rec' has no env")
    monkeypatch.setenv("ENVHUB_TRACEBACK", "0")
    assert main(["info", "rec/Nope-v0"]) == EXIT_ENVHUB_ERROR
    _one_line(capsys, EXIT_ENVHUB_ERROR, "envhub: error: Backend 'rec' has no environment 'Nope-v0'")


def test_help_and_version_return_0_from_main(capsys):
    assert main(["--version"]) == 0 and capsys.readouterr().out.startswith("envhub ")
    assert main(["list", "--help"]) == 0 and "--check" in capsys.readouterr().out
    assert main([]) == EXIT_USAGE


def test_a_closed_stdout_is_quiet(tmp_path):
    import subprocess
    import sys

    line = f'"{sys.executable}" -m envhub list >&-; echo "status=$?"'
    run = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=tmp_path)
    assert run.stdout == "status=0\n" and run.stderr == ""  # no "'NoneType' object has no attribute 'flush'"


@pytest.mark.parametrize(
    "exc",
    [
        MemoryError("Unable to allocate 745. GiB for an array with shape (99999999999,) and data type int64"),
        RuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating 400000000000 bytes."),  # XLA's, as jax raises it
    ],
    ids=["numpy", "xla"],
)
def test_out_of_memory_is_an_error_with_the_fix_not_a_bug(exc, capsys, monkeypatch):
    """``envhub bench ID -n 99999999999``: NumPy or XLA cannot allocate the batch; the user's input, not a bug."""
    from envhub.cli import COMMANDS

    def too_big(args):
        raise exc

    monkeypatch.delenv("ENVHUB_TRACEBACK", raising=False)
    monkeypatch.setattr(COMMANDS["bench"], "run", too_big)
    assert main(["bench", "rec/Corridor-v0", "-n", "99999999999"]) == EXIT_ENVHUB_ERROR
    line = _one_line(capsys, EXIT_ENVHUB_ERROR, f"envhub: error: out of memory: {exc}")
    assert line.endswith("; run with a smaller batch (-n) or fewer --steps")
