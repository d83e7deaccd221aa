"""The author's path: `envhub new-plugin` writes a plugin that builds, passes `twine check --strict`, installs
from its wheel, is found, checked and passes its own tests; plugins/_template is its output for mybackend.

One generated plugin (named toychain, so a name the template forgot to fill in shows) serves every test
here: it is built and installed once, in the module fixture.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from side_venv import PYTEST

import envhub
from envhub import testing
from envhub.cli import main
from envhub.cli.cmd_new_plugin import render
from envhub.errors import InvalidArgumentError

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "plugins" / "_template"
SOURCE = ROOT / "envhub" / "cli" / "plugin_template"
NAME = "toychain"


def _new_plugin(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["new-plugin", *args])
    return code, out.getvalue()


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """`envhub new-plugin toychain`, built (`uv build --wheel`), checked (`twine check --strict`), installed from the wheel."""
    root = tmp_path_factory.mktemp("author")
    directory = root / f"envhub-{NAME}"
    code, printed = _new_plugin(NAME, "--dir", str(directory))
    assert code == 0, printed
    dist, site = root / "dist", root / "site"
    uv = [sys.executable, "-m", "uv"]
    subprocess.run([*uv, "build", "--wheel", "--quiet", "--out-dir", str(dist), str(directory)], check=True)
    wheels = sorted(dist.glob("*.whl"))
    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, wheels)], capture_output=True, text=True
    )
    subprocess.run(
        [*uv, "pip", "install", "--quiet", "--no-deps", "--target", str(site), *map(str, wheels)], check=True
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return {"dir": directory, "printed": printed, "wheels": wheels, "twine": twine, "env": env}


def _envhub(env, *args):
    return subprocess.run([sys.executable, "-m", "envhub", *args], capture_output=True, text=True, env=env)


def test_new_plugin_writes_a_plugin_whose_wheel_passes_twine_check(plugin):
    directory = plugin["dir"]
    assert sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()) == [
        ".github/workflows/ci.yml",
        ".gitignore",
        "README.md",
        "pyproject.toml",
        f"src/envhub_{NAME}/__init__.py",
        f"src/envhub_{NAME}/chain.py",
        f"tests/test_{NAME}.py",
    ]
    assert not [
        p
        for p in directory.rglob("*")
        if p.is_file() and ("mybackend" in p.read_text() or "{{" in p.read_text().replace("${{", ""))
    ]
    assert f"cd {directory}" in plugin["printed"] and f"envhub check {NAME}/Chain-v0 -n 4" in plugin["printed"]
    assert [w.name for w in plugin["wheels"]] == [f"envhub_{NAME}-0.1.0-py3-none-any.whl"]
    assert plugin["twine"].returncode == 0 and "PASSED" in plugin["twine"].stdout, plugin["twine"].stdout
    with zipfile.ZipFile(plugin["wheels"][0]) as whl:
        meta = whl.read(f"envhub_{NAME}-0.1.0.dist-info/METADATA").decode()
        entry_points = whl.read(f"envhub_{NAME}-0.1.0.dist-info/entry_points.txt").decode()
    assert f"Name: envhub-{NAME}\n" in meta and "Requires-Dist: envhub<1,>=0.1.0\n" in meta
    assert "Before you publish" in meta  # the README, with the checklist, is the long description
    assert f"[envhub.backends]\n{NAME} = envhub_{NAME}\n" in entry_points


def test_readme_checklist_and_ci_workflow(plugin):
    import yaml

    readme = (plugin["dir"] / "README.md").read_text()
    checklist = readme.split("## Before you publish")[1]
    for item in ("python -m pytest", "python -m build", "uv build", "twine check --strict dist/*", "version is bumped"):
        assert item in checklist
    assert "`envhub>=0.1.0,<1`" in checklist and "ENVHUB_API = 1" in checklist and "third-party plugins" in checklist
    ci = yaml.safe_load((plugin["dir"] / ".github" / "workflows" / "ci.yml").read_text())
    runs = "\n".join(step.get("run", "") for step in ci["jobs"]["test"]["steps"])
    for command in (
        "uv pip install",
        "-e . pytest twine",
        "pytest -q",
        "uv build --out-dir dist",
        "twine check --strict dist/*",
    ):
        assert command in runs
    assert '${ENVHUB_INDEX:+--index "$ENVHUB_INDEX"}' in runs and "--extra-index-url" not in runs


def test_template_is_discovered_through_its_entry_point(plugin):
    listed = _envhub(plugin["env"], "list", "--json")
    row = {r["prefix"]: r for r in json.loads(listed.stdout)}[NAME]
    fields = {"distribution": f"envhub-{NAME}", "version": "0.1.0", "status": "ok", "reason": "", "api": 1}
    assert {key: row[key] for key in fields} == fields
    assert json.loads(_envhub(plugin["env"], "list", NAME, "--json").stdout)[0]["id"] == f"{NAME}/Chain-v0"


def test_template_passes_envhub_check(plugin):
    """`envhub check`, as the README says to run it (the plugin's own tests below run the whole kit)."""
    only = "spaces,init,vmap"
    run = _envhub(plugin["env"], "check", f"{NAME}/Chain-v0", "-n", "4", "--only", only, "--json", "-q")
    report = json.loads(run.stdout)
    assert run.returncode == 0 and report["passed"], report
    assert {c["name"]: c["status"] for c in report["checks"]} == {"spaces": "pass", "init": "pass", "vmap": "skip"}


def test_template_own_tests_pass(plugin):
    run = subprocess.run(
        [sys.executable, *PYTEST, "-q", "-p", "no:cacheprovider"],  # its pyproject's testpaths: tests/
        capture_output=True,
        text=True,
        env=plugin["env"],
        cwd=plugin["dir"],
    )
    assert run.returncode == 0, run.stdout[-3000:]
    # two kit classes, each with every check (the batched one skips vmap, both skip params: Chain has none),
    # plus the template's one own test
    assert f"{2 * len(testing.CHECKS) - 3 + 1} passed, 3 skipped" in run.stdout, run.stdout[-500:]


def test_template_declares_its_kwargs_for_envhub_info(plugin):
    info = json.loads(_envhub(plugin["env"], "info", f"{NAME}/Chain-v0", "--json").stdout)
    assert info["kwargs"]["length"] == "int = 8, >= 2  (cells in the chain)"
    assert "max_steps" not in info["kwargs"] and info["kwargs"]["max_episode_steps"].startswith("int | None = 50")
    assert info["library"] == f"envhub-{NAME} 0.1.0"  # metadata["library"], filled in by the template
    refused = _envhub(plugin["env"], "info", f"{NAME}/Chain-v0", "-k", "slip=high")
    assert refused.returncode == 3 and len(refused.stderr.splitlines()) == 1
    assert f"slip='high' (str) is not float; {NAME}/Chain-v0 accepts length: int = 8" in refused.stderr
    short = _envhub(plugin["env"], "info", f"{NAME}/Chain-v0", "-k", "length=-5")  # bounds: refused before the factory
    assert short.returncode == 3 and len(short.stderr.splitlines()) == 1 and "length=-5" in short.stderr, short.stderr


def test_plugins_template_is_new_plugin_output_for_mybackend():
    """plugins/_template is generated, never edited: envhub/cli/plugin_template/ is the one source."""
    skip = {"__pycache__", ".pytest_cache", "build", "dist", ".venv"}
    on_disk = {
        p.relative_to(TEMPLATE).as_posix(): p.read_text()
        for p in TEMPLATE.rglob("*")
        if p.is_file() and not skip & set(p.parts) and not any(part.endswith(".egg-info") for part in p.parts)
    }
    # its version is the core's (scripts/version.py stamps it); a new plugin starts at 0.1.0
    assert on_disk == render("mybackend", version=envhub.__version__), (
        "plugins/_template differs from `envhub new-plugin mybackend`: edit envhub/cli/plugin_template/, then "
        "rm -rf plugins/_template && envhub new-plugin mybackend --dir plugins/_template && python scripts/version.py "
        f"{envhub.__version__} (which stamps the core's version into it)"
    )


def test_the_core_wheel_and_sdist_ship_the_template():
    from hatchling.builders.sdist import SdistBuilder
    from hatchling.builders.wheel import WheelBuilder

    sources = {p.relative_to(ROOT).as_posix() for p in SOURCE.rglob("*.tmpl")}
    assert len(sources) == 7
    for builder in (WheelBuilder(str(ROOT)), SdistBuilder(str(ROOT))):
        assert sources <= {f.distribution_path for f in builder.recurse_included_files()}


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        (
            "My-Backend",
            r"'My-Backend' is not a lowercase identifier usable as a backend prefix: .*; try 'my_backend'\.",
        ),
        (
            "3d",
            r"'3d' is not a lowercase identifier .* a lowercase letter, then lowercase letters, digits or '_'.*try 'my3d'",
        ),
        ("envhub-foo", r"'envhub-foo' is not .* without 'envhub' in front .*try 'foo'"),
        ("envhub_foo", r"'envhub_foo' is not .*try 'foo'"),
        ("a/b", r"'a/b' is not .*try 'a_b'"),
        ("", r"'' is not .*try 'mybackend'"),
        (
            "gymnax",
            r"'gymnax' is the prefix of envhub's own plugin envhub-gymnax.*pick another name, e.g. 'gymnax_ext'",
        ),
    ],
)
def test_new_plugin_refuses_a_bad_name(name, rule, tmp_path, capsys):
    assert main(["new-plugin", name, "--dir", str(tmp_path / "out")]) == 3
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    with pytest.raises(InvalidArgumentError, match=rule):
        render(name)
    assert not (tmp_path / "out").exists()


def test_new_plugin_never_overwrites(tmp_path, capsys, monkeypatch):
    (tmp_path / "envhub-mine").mkdir()
    (tmp_path / "envhub-mine" / "keep.txt").write_text("mine")
    monkeypatch.chdir(tmp_path)  # the default folder, ./envhub-NAME
    assert main(["new-plugin", "mine"]) == 3
    assert "'envhub-mine' already exists; envhub new-plugin writes a new folder and never overwrites one" in (
        capsys.readouterr().err
    )
    assert [p.name for p in (tmp_path / "envhub-mine").iterdir()] == ["keep.txt"]
