"""The ``envhub`` command's exit codes, through a subprocess: 0 ok, 1 a check failed, 2 bad usage, 3 envhub error.

An envhub error is one line on stderr, never a traceback; a closed stdout ends the command quietly (141).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fake_dists import write_dist

from envhub.cli import EXIT_BROKEN_PIPE, EXIT_CHECK_FAILED, EXIT_ENVHUB_ERROR, EXIT_INTERNAL_ERROR, EXIT_OK, EXIT_USAGE

TESTS = Path(__file__).resolve().parent

CLI_PLUGIN = """
import atexit, os

import envhub
from envhub.testing.toy_envs import Corridor

if os.environ.get("EXIT_PROBE"):  # test_the_command_ends_after_every_exit_handler_without_the_teardown
    atexit.register(lambda: open(os.environ["EXIT_PROBE"] + ".handler", "w").close())

    class _Freed:  # at teardown, builtins may be gone: what __del__ needs is bound now
        def __del__(self, path=os.environ["EXIT_PROBE"] + ".freed", opened=os.open, close=os.close):
            close(opened(path, os.O_CREAT | os.O_WRONLY))

    _freed_at_teardown = _Freed()

class Crashes(Corridor):
    def _init(self, key):
        raise RuntimeError("a bug in the plugin's init")

@envhub.hookimpl
def envhub_register_envs(register):
    register("Corridor-v0", Corridor, check_options={"time_limit_kwarg": "max_steps"})
    register("Offline-v0", None, unavailable="needs a download")
    register("Broken-v0", lambda **kwargs: 1 / 0)
    register("Crashes-v0", Crashes)
    for i in range(5000):  # enough output to fill a pipe
        register(f"Many-{i:04d}", Corridor)
"""


@pytest.fixture
def cli(site):
    """Run ``python -m envhub ARGS`` with the ``cli`` test backend installed (only it: ENVHUB_PLUGINS=cli)."""
    write_dist(site, "fake-plugin-cli", {"cli": "fake_plugin_cli"}, {"fake_plugin_cli": CLI_PLUGIN})
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ENVHUB_")}
    environ.update(PYTHONPATH=os.pathsep.join([str(site), str(TESTS)]))

    def run(*args: str, **kwargs) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "envhub", *args]
        return subprocess.run(command, capture_output=True, text=True, **{"env": environ, **kwargs})

    run.environ, run.site = environ, site
    return run


def one_line(run, code):
    assert run.returncode == code, (run.returncode, run.stderr)
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert run.stderr.startswith("envhub")
    return run.stderr


def test_ok_and_a_failed_check(cli):
    listed = cli("list")
    assert listed.returncode == EXIT_OK and "cli" in listed.stdout and listed.stderr == ""
    failed = cli("check", "cli/Corridor-v0", "-k", "bug=next_step_reset", "--only", "truncation", "-q")
    assert failed.returncode == EXIT_CHECK_FAILED and "FAIL" in failed.stdout and "Traceback" not in failed.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (["check", "cli/Corridor-v0", "-n", "0"], "argument -n/--num-envs: '0' is not a positive int"),
        (["info", "cli/Corridor-v0", "-n", "two"], "'two' is not a positive int"),
        (["info", "cli/Corridor-v0", "-k", "novalue"], "must look like KEY=VALUE"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(cli, args, message):
    assert message in one_line(cli(*args), EXIT_USAGE)


@pytest.mark.parametrize(
    "args,message",
    [
        (["info", "cli/Corridor-v0", "-k", "foo=1"], "make('cli/Corridor-v0', ...): unknown keyword argument foo=1"),
        (["check", "cli/Corridor-v0", "-k", "foo=1"], "cli/Corridor-v0 accepts length: int = 6"),
        (["check", "cli/Offline-v0"], "'cli/Offline-v0' is listed but unavailable here: needs a download"),
        (["info", "cli/Broken-v0"], "failed while making 'cli/Broken-v0': ZeroDivisionError: division by zero"),
        (["check", "cli/Broken-v0", "-n", "2"], "failed while making 'cli/Broken-v0': ZeroDivisionError"),
        (["info", "cli/Corridr-v0"], "did you mean 'cli/Corridor-v0'"),
        (["list", "nosuchbackend"], "No envhub backend is named 'nosuchbackend'"),
    ],
)
def test_envhub_errors_are_one_line_and_exit_3(cli, args, message):
    err = one_line(cli(*args), EXIT_ENVHUB_ERROR)
    assert err.startswith("envhub: error: ") and message in err and "[ 1/" not in err  # no check ran


def test_a_closed_pipe_is_quiet(cli):
    err = cli.site / "err.txt"
    line = f'"{sys.executable}" -m envhub list cli 2>"{err}" | head -1; echo "status=${{PIPESTATUS[0]}}"'
    piped = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=cli.environ)
    assert piped.stdout.splitlines() == ["cli/Broken-v0", f"status={EXIT_BROKEN_PIPE}"]
    assert err.read_text() == ""  # no traceback, no "Exception ignored ... BrokenPipeError"
    closed = subprocess.Popen(
        [sys.executable, "-m", "envhub", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli.environ
    )
    closed.stdout.close()  # before envhub writes its (small) table: the write at its end meets a closed pipe
    assert closed.wait() == EXIT_BROKEN_PIPE and closed.stderr.read() == b""
    closed.stderr.close()


def test_an_internal_error_is_one_line_and_exit_3(cli):
    assert EXIT_INTERNAL_ERROR == EXIT_ENVHUB_ERROR == 3  # the exit codes: 0 ok, 1 a failed check, 2 usage, 3 an envhub error
    line = one_line(cli("info", "cli/Crashes-v0"), EXIT_INTERNAL_ERROR)
    assert line.startswith("envhub: internal error: RuntimeError: a bug in the plugin's init (run with --traceback")
    shown = cli("info", "cli/Crashes-v0", "--traceback")
    assert shown.returncode == EXIT_INTERNAL_ERROR and "Traceback (most recent call last)" in shown.stderr


def test_the_command_ends_after_every_exit_handler_without_the_teardown(cli):
    """envhub.cli.quick_exit: exit handlers registered by what a command imports run; the teardown that frees
    every object (0.5-2 s after jax and a backend) does not; the exit code and the output are the command's."""
    probe = cli.site / "probe"
    environ = {**cli.environ, "EXIT_PROBE": str(probe)}
    plain = subprocess.run([sys.executable, "-c", "import fake_plugin_cli"], env=environ, capture_output=True)
    assert plain.returncode == 0 and probe.with_suffix(".freed").exists(), plain.stderr  # the probe sees a teardown
    probe.with_suffix(".freed").unlink()
    probe.with_suffix(".handler").unlink()
    for args, code in ((["list", "cli", "--json"], EXIT_OK), (["info", "cli/Offline-v0"], EXIT_ENVHUB_ERROR)):
        run = cli(*args, env=environ)  # each imports the plugin (its environments), hence the probe
        assert run.returncode == code, run.stderr
        assert probe.with_suffix(".handler").exists() and not probe.with_suffix(".freed").exists(), args
        probe.with_suffix(".handler").unlink()
        if code == EXIT_OK:  # all of a long output (more than a pipe holds) is delivered
            assert len(json.loads(run.stdout)) == 5004
