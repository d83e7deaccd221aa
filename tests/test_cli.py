import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

import envhub
from envhub.cli import EXIT_CHECK_FAILED, EXIT_ENVHUB_ERROR, EXIT_OK, EXIT_USAGE, main
from envhub.testing.toy_envs import ToyPlugin


@pytest.fixture
def toy():
    """The toy backend registered in the default registry (what the CLI uses), removed afterwards."""
    envhub.register_backend("toy", ToyPlugin(), replace=True)
    yield
    envhub.unregister_backend("toy")


def test_list_backends_table_and_json(toy, capsys):
    assert main(["list"]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["PREFIX", "DISTRIBUTION", "VERSION", "API", "STATUS"]
    assert any(line.split()[:2] == ["toy", "<in-process>"] for line in out.splitlines())
    assert main(["list", "--json"]) == EXIT_OK
    rows = {r["prefix"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["toy"] == {
        "schema": 1,
        "prefix": "toy",
        "distribution": "<in-process>",
        "version": "",
        "status": "ok",
        "reason": "",
        "api": None,
        "error": None,  # the message of a backend in status "error"
    }


def test_list_shows_a_backend_whose_hook_raises_as_an_error_row(toy, capsys):
    class Broken:
        @envhub.hookimpl
        def envhub_register_envs(self, register):
            raise OSError("its registry file is gone")

    envhub.register_backend("broken", Broken(), replace=True)
    try:
        assert main(["list"]) == EXIT_OK
        out = capsys.readouterr().out
        assert ["broken", "<in-process>", "-", "error"] in [line.split() for line in out.splitlines()]
        assert "broken: The envhub plugin 'broken' (<in-process>) failed in envhub_register_envs(): OSError" in out
        assert main(["list", "--json"]) == EXIT_OK
        row = {r["prefix"]: r for r in json.loads(capsys.readouterr().out)}["broken"]
        assert row["status"] == "error" and row["error"] == row["reason"]
        assert "failed in envhub_register_envs(): OSError: its registry file is gone" in row["error"]
    finally:
        envhub.unregister_backend("broken")


def test_list_envs_of_a_prefix(toy, capsys):
    assert main(["list", "TOY"]) == EXIT_OK
    captured = capsys.readouterr()
    assert captured.out.splitlines()[:2] == ["toy/Corridor-v0", "toy/Offline-v0  (unavailable: needs a download)"]
    assert "1 available, 1 unavailable" in captured.err
    assert main(["list", "toy", "--json"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)[1] == {
        "schema": 1,
        "id": "toy/Offline-v0",
        "available": False,
        "reason": "needs a download",
    }


def _documented_fields(heading: str) -> list[str]:
    """The field column of the first table after the line of docs/cli.md that starts with ``heading``."""
    lines = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    rows = itertools.dropwhile(lambda line: not line.startswith("| field"), lines[start:])
    table = itertools.takewhile(lambda line: line.startswith("|"), rows)
    return [line.split("|")[1].strip().strip("`") for line in list(table)[2:]]


def test_list_json_fields_are_the_documented_schema(toy, capsys):
    assert main(["list", "--json"]) == EXIT_OK
    (row,) = [r for r in json.loads(capsys.readouterr().out) if r["prefix"] == "toy"]
    assert list(row) == _documented_fields("`envhub list --json` prints")
    assert main(["list", "toy", "--json"]) == EXIT_OK
    assert list(json.loads(capsys.readouterr().out)[0]) == _documented_fields("`envhub list PREFIX --json` prints")


def test_docs_synopsis_names_every_command_and_flag():
    from envhub.cli import COMMANDS, _parser

    synopsis = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text().split("```")[1]
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name in COMMANDS:
        line = f"envhub {name} "
        block = synopsis[synopsis.index(line) :].split("\nenvhub ")[0] if line in synopsis else ""
        words = block.replace("[", " ").replace("]", " ").split()
        for action in sub.choices[name]._actions:  # each option, by one of its spellings (-n or --num-envs)
            flags = [f for f in action.option_strings if f not in ("-h", "--help")]
            missing += [f"envhub {name} {'/'.join(flags)}"] if flags and not set(flags) & set(words) else []
        missing += [f"envhub {name}"] if not block else []
    assert missing == []


def test_info_json(toy, capsys):
    assert main(["info", "toy/Corridor-v0", "-n", "4", "-k", "length=9", "--json"]) == EXIT_OK
    info = json.loads(capsys.readouterr().out)
    assert info["num_envs"] == 4 and info["jax_native"] is True and info["vmappable"] is False
    assert info["action_space"] == "Discrete(2, shape=(4,), dtype=int32)"
    assert info["obs"] == "float32[4, 2]" and info["info_keys"] == {"moved": "bool[4]"}
    assert info["description"] == "a walk to the right end" and "jittable" not in info
    assert info["params"] == "none (default_params is None)"


@pytest.mark.requires_plugin("gymnax")
def test_info_shows_default_params_as_the_state_keeps_them(capsys):
    assert main(["info", "gymnax/CartPole-v1", "-k", "gravity=3.5", "--json"]) == EXIT_OK
    params = json.loads(capsys.readouterr().out)["params"]
    assert params["params.gravity"] == "float32[] = 3.5" and params["params.max_steps_in_episode"] == "int32[] = 500"


def test_check_passes_with_progress_and_fails_with_exit_1(toy, capsys):
    assert main(["check", "toy/Corridor-v0", "--only", "init,truncation"]) == EXIT_OK
    captured = capsys.readouterr()
    assert "[ 1/2] init ..." in captured.err and "2 passed, 0 failed, 0 skipped" in captured.out
    assert (
        main(["check", "toy/Corridor-v0", "-k", "bug=next_step_reset", "--only", "truncation", "--json", "-q"])
        == EXIT_CHECK_FAILED
    )
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] is False and "dummy step" in report["checks"][0]["message"]


def test_check_rejects_unknown_check_names(toy, capsys):
    assert main(["check", "toy/Corridor-v0", "--only", "jitt"]) == EXIT_USAGE
    assert "'jitt' is not a check" in capsys.readouterr().err


def test_bench_json_schema_table_and_plot(toy, capsys, tmp_path):
    out, png = tmp_path / "bench.json", tmp_path / "bench.png"
    argv = [
        "bench",
        "toy/Corridor-v0",
        "-n",
        "1,8",
        "--steps",
        "20",
        "--repeats",
        "2",
        "--json",
        str(out),
        "--plot",
        str(png),
    ]
    assert main(argv) == EXIT_OK
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0].split() == ["NUM_ENVS", "COMPILE_S", "STEPS/S"] and "2/2" in captured.err
    document = json.loads(out.read_text())
    assert document["schema"] == 1 and {"jax", "device", "cpus", "machine"} <= set(document["machine"])
    assert [r["num_envs"] for r in document["results"]] == [1, 8]
    for row in document["results"]:
        assert set(row) == {"id", "num_envs", "steps", "repeats", "compile_s", "median_s", "steps_per_s"}
        assert row["id"] == "toy/Corridor-v0" and row["steps_per_s"] > 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000


def test_bench_plot_is_one_panel_per_backend_log_scaled_with_the_legend_outside():
    pytest.importorskip("matplotlib")
    from matplotlib import pyplot as plt

    from envhub.tools import bench, plotting

    def rows(env_id, base):
        return [{"id": env_id, "num_envs": n, "steps_per_s": base * n**0.8} for n in (1024, 1, 64)]

    ids = ["gymnax/CartPole-v1", "gymnax/Pendulum-v1", "brax/ant"]
    fig = bench.figure({env_id: rows(env_id, 1e4 * (i + 1)) for i, env_id in enumerate(ids)}, title="three envs")
    try:
        fig.canvas.draw()
        assert [ax.get_title(loc="left").split(":")[0] for ax in fig.axes] == ["gymnax", "brax"]  # a panel each
        for ax in fig.axes:
            assert ax.get_xscale() == ax.get_yscale() == "log"
            assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "64", "1024"]  # the measured sizes
            legend = ax.get_legend().get_window_extent()
            assert legend.x0 >= ax.get_window_extent().x1  # outside the axes: it covers no point
            styles = [(line.get_color(), line.get_marker()) for line in ax.get_lines()]
            assert len(set(styles)) == len(styles) and all(c in plotting.OKABE_ITO for c, _ in styles)
        assert [t.get_text() for t in fig.axes[1].texts] == ["30k", "840k", "7.7M"]  # each point's steps/s
    finally:
        plt.close(fig)


def test_bench_json_to_stdout_and_bad_sizes(toy, capsys):
    assert main(["bench", "toy/Corridor-v0", "--steps", "5", "--repeats", "1", "--json", "-q"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["results"][0]["num_envs"] == 1
    assert main(["bench", "toy/Corridor-v0", "-n", "4,zero"]) == EXIT_USAGE
    assert "comma-separated positive ints" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (["info", "CartPole-v1"], "not of the form 'prefix/Name'"),
        (["info", "toy/Coridor-v0"], "did you mean 'toy/Corridor-v0'"),
        (["info", "toyy/Corridor-v0"], "did you mean 'toy'"),
        (["info", "toy/Offline-v0"], "unavailable here"),
    ],
)
def test_envhub_errors_exit_3_with_the_message(toy, capsys, argv, message):
    assert main(argv) == EXIT_ENVHUB_ERROR
    err = capsys.readouterr().err
    assert err.startswith("envhub: error: ") and message in err


def test_bad_kwarg_is_a_usage_error(toy, capsys):
    assert main(["info", "toy/Corridor-v0", "-k", "novalue"]) == EXIT_USAGE
    assert "KEY=VALUE" in capsys.readouterr().err


def test_kwarg_values_are_literals_and_inf_or_nan_are_floats():
    """``-k x_threshold=inf`` switches a limit off; ``nan`` reaches make as NaN, which refuses it by name."""
    from envhub.cli.common import parse_kwargs

    got = parse_kwargs(["a=3", "b=0.5", "c=(1, 2)", "d=inf", "e=-Infinity", "f=nan", "g=text", "h=None"])
    assert {k: v for k, v in got.items() if k != "f"} == {
        "a": 3,
        "b": 0.5,
        "c": (1, 2),
        "d": float("inf"),
        "e": float("-inf"),
        "g": "text",
        "h": None,
    }
    assert isinstance(got["f"], float) and got["f"] != got["f"]


@pytest.mark.requires_plugin("gymnax")
def test_a_nan_kwarg_is_refused_by_name_on_the_command_line(capsys):
    assert main(["info", "gymnax/CartPole-v1", "-k", "gravity=nan"]) == EXIT_ENVHUB_ERROR
    err = capsys.readouterr().err
    assert err.startswith("envhub: error: make('gymnax/CartPole-v1', ...): gravity=nan is NaN") and err.count("\n") == 1


def test_help_and_usage_exit_codes():
    help_run = subprocess.run([sys.executable, "-m", "envhub", "--help"], capture_output=True, text=True)
    assert help_run.returncode == 0 and "exit codes:" in help_run.stdout and "envhub check" in help_run.stdout
    bad = subprocess.run([sys.executable, "-m", "envhub", "frobnicate"], capture_output=True, text=True)
    assert bad.returncode == EXIT_USAGE and "invalid choice" in bad.stderr
