"""The README's docs command works with the ``docs`` extra alone (issue 50).

A fresh ``uv pip install -e ".[docs]"`` has none of the optional libraries some envhub modules import
(gymnasium, PettingZoo, gymnax, JaxMARL, torch, Stable-Baselines3, ...) and no backend plugin. Installing
such a venv is too slow for the suite, so this builds the site (``mkdocs build --strict``) in a subprocess of
this venv where those libraries cannot be imported (``None`` in ``sys.modules``: ``import`` raises
``ModuleNotFoundError`` and ``importlib.util.find_spec`` answers None, as when they are not installed) and no
plugin is loaded (``ENVHUB_DISABLE_PLUGIN_AUTOLOAD``). The pages of the modules that need them must render
from the source, under a note naming the extra to install.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs import _missing_docs_package

ROOT = Path(__file__).resolve().parents[1]

#: Not in the ``docs`` extra: the libraries of the optional modules, and the signature formatters.
BLOCKED = (
    "gymnasium", "pettingzoo", "gymnax", "jaxmarl", "torch", "torchrl", "tensordict", "stable_baselines3",
    "flax", "brax", "black", "ruff", "stoa", "jumanji",
)  # fmt: skip

BUILD = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # "not installed": import raises ModuleNotFoundError, find_spec gives None
from mkdocs.__main__ import cli
sys.argv = ["mkdocs", "build", "--strict", "--quiet", "--site-dir", {site!r}]
cli()
"""

#: The page of each module needing an optional library, and the extra its note must name.
NEEDS = {
    "envhub.interop.gym_env": "gymnasium",
    "envhub.interop.gym_vector": "gymnasium",
    "envhub.interop.pettingzoo_parallel": "pettingzoo",
    "envhub.interop.pettingzoo_aec": "gymnasium",
    "envhub.interop.gymnax_export": "gymnax",
    "envhub.interop.jaxmarl_export": "jaxmarl",
    "envhub.interop.torchrl_export": "torchrl",
    "envhub.interop.sb3": "sb3",
    "envhub.interop.stoa_export": "stoa",
    "envhub.interop.jumanji_export": "jumanji",
    "envhub.interop.sebulba": "stoa",
}


@pytest.fixture(scope="module")
def minimal_site(tmp_path_factory):
    missing = _missing_docs_package()
    if missing is not None:
        pytest.skip(f"the docs build needs {missing}, which is not installed (uv pip install -e '.[docs]')")
    site = tmp_path_factory.mktemp("minimal-site")
    env = {**os.environ, "ENVHUB_DISABLE_PLUGIN_AUTOLOAD": "1", "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-c", BUILD.format(blocked=BLOCKED, site=str(site))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed without the optional libraries:\n{done.stderr[-6000:]}"
    return site


def _page(site: Path, module: str) -> str:
    return (site / "reference" / module / "index.html").read_text()


def test_optional_modules_render_from_the_source_with_a_note_naming_their_extra(minimal_site):
    for module, extra in NEEDS.items():
        html = _page(minimal_site, module)
        assert f"Needs the {extra} extra" in html, module
        assert f"envhub[{extra}]" in html, module  # the install line
        assert "read from the source" in html, module
    # ... and their classes are documented all the same (read by griffe, not imported)
    assert 'id="envhub.interop.gym_env.EnvhubEnv"' in _page(minimal_site, "envhub.interop.gym_env")
    assert 'id="envhub.interop.sb3.to_sb3_vec_env"' in _page(minimal_site, "envhub.interop.sb3")
    assert 'id="envhub.interop.gymnax_export.to_gymnax"' in _page(minimal_site, "envhub.interop.gymnax_export")
    assert 'id="envhub.interop.torchrl_export.to_torchrl"' in _page(minimal_site, "envhub.interop.torchrl_export")


def test_the_core_pages_need_no_note_and_no_plugin(minimal_site):
    for module in ("envhub", "envhub.interop", "envhub.wrappers", "envhub.plugin", "envhub.testing"):
        assert "Needs the" not in _page(minimal_site, module), module
    assert 'id="envhub.make"' in _page(minimal_site, "envhub")
    backends = (minimal_site / "backends" / "index.html").read_text()
    assert "No backend plugin is installed where these docs were built" in backends
    assert "<code>envhub-gymnax</code>" not in backends  # the installed table is empty ...
    assert "<td><code>.[gymnax]</code></td>" in backends  # ... the in-repo one, from plugins/, is not


def test_long_signatures_are_formatted_without_black_or_ruff(minimal_site):
    html = _page(minimal_site, "envhub")
    start = html.index('id="envhub.make"')
    signature = html[html.index("doc-signature", start) : html.index("</pre>", start)]
    assert signature.count("\n") >= 4, signature  # one parameter a line, not one cut-off line
