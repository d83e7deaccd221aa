"""Install hints never name a range that reaches PyPI's unrelated ``envhub`` (1.0-1.4), and name the right distribution."""

import re
from pathlib import Path

import pytest
from fake_dists import TOY_PLUGIN, write_dist

import envhub
from envhub.errors import PluginIncompatibleError
from envhub.registry.plugin_api import IN_REPO_BACKENDS, api_problem, core_install_line, plugin_install_line

GOOD_PLUGIN = "ENVHUB_API = 1\n" + TOY_PLUGIN


@pytest.mark.parametrize(
    "wanted,line",
    [
        (">=0.3,<0.4", 'pip install "envhub>=0.3,<0.4"'),  # already below 1.0: as the plugin asks
        ("~=0.2", 'pip install "envhub~=0.2"'),
        ("==0.2.*", 'pip install "envhub==0.2.*"'),
        (">=0.2", 'pip install "envhub>=0.2,<1"'),  # open above: capped below 1.0
        (">=0.2,<2", 'pip install "envhub>=0.2,<1"'),  # an upper bound past 1.0 becomes <1
        ("!=0.1.0", 'pip install "envhub!=0.1.0,<1"'),
        (">=1.0", None),  # only the unrelated project's versions: no envhub line at all
        ("==1.*", None),
        ("~=1.2", None),
    ],
)
def test_core_install_line_stays_below_one(wanted, line):
    assert core_install_line(wanted) == line


def test_plugin_asking_for_envhub_1_gets_no_line_that_installs_the_unrelated_project(site):
    write_dist(
        site,
        "fake-plugin-one",
        {"one": "fake_plugin_one"},
        {"fake_plugin_one": GOOD_PLUGIN},
        requires=("envhub>=1.0",),
        version="2.0.0",
    )
    with pytest.raises(
        PluginIncompatibleError,
        match=r"requires envhub>=1\.0, but envhub 0\.1\.0 is installed; .*pip install -U 'fake-plugin-one' for a "
        r"release that accepts envhub 0\.1\.0; no release of this envhub is 1\.0 or later \(the envhub 1\.x on PyPI "
        r"is an unrelated project: do not install it\).*envhub>=0\.1,<1",
    ) as info:
        envhub.Registry().make("one/Corridor-v0")
    assert 'install "envhub' not in str(info.value)


def test_every_envhub_pip_line_in_a_hint_is_capped_below_one():
    lines = [plugin_install_line(p) for p in (*IN_REPO_BACKENDS, "nosuchbackend")]
    lines += [str(api_problem(p, f"envhub-{p} 0.1.0", 2)) for p in IN_REPO_BACKENDS]
    for line in lines:
        for spec in re.findall(r'pip install "envhub(?:\[[^\]]*\])?([^"]*)"', line):
            assert core_install_line(spec) == f'pip install "envhub{spec}"', line  # already below 1.0


def test_api_hint_names_the_distribution_to_reinstall():
    in_repo = str(api_problem("gymnax", "envhub-gymnax 0.1.0", 2))
    assert 'reinstall the backend of this envhub release: pip install "envhub[gymnax]>=0.1.0,<1"' in in_repo
    third_party = str(api_problem("x", "fake-x 0.3.0", 2))
    assert "install a release of 'fake-x' written for plugin API 1 (pip install -U fake-x)" in third_party
    in_process = str(api_problem("x", "<in-process>", 2))
    assert "pip install" not in in_process and "port the plugin object to plugin API 1 (ENVHUB_API = 1)" in in_process


def test_render_hints_carry_the_range():
    from envhub.tools import render

    for line in (render._RENDER_EXTRA, render._VIDEO_EXTRA):
        spec = re.search(r'pip install "envhub\[\w+\]([^"]*)"', line).group(1)
        assert spec and core_install_line(spec) == f'pip install "envhub{spec}"', line


def test_no_source_of_envhub_names_a_bare_envhub_pip_line():
    """Every ``pip install "envhub..."`` the core writes carries a range below 1.0 (or builds it with compatible_core_range)."""
    root = Path(envhub.__file__).parent
    found = []
    for path in root.rglob("*.py"):
        for rest in re.findall(r'pip install \\?"envhub(?:\[[^\]]*\])?([^"\\]*)', path.read_text()):
            found.append(path.name)
            if rest.startswith("{compatible_core_range(") or (path.name == "plugin_api.py" and rest.startswith("{")):
                continue  # built by compatible_core_range, or by core_install_line (tested above)
            assert rest and core_install_line(rest) == f'pip install "envhub{rest}"', (path, rest)
    assert {"render.py", "contract.py", "plugin_api.py"} <= set(found)  # contract.py: every export's missing library
