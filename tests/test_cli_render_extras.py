"""``envhub record`` where a drawing library is missing: one line naming the package and the plugin's install line
(exit 3, as every envhub error), never "internal error", for every backend whose renderer needs an optional package.

The package is hidden the cheap way (``sys.modules[name] = None``: importing it raises ``ImportError``, as when
it is not installed), so the library's own reaction runs: gymnasium's ``DependencyNotInstalled`` (not an
``ImportError`` since gymnasium 1.0) for pygame, the plugins' own errors for cairosvg and mujoco.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import envhub
from envhub.cli import EXIT_ENVHUB_ERROR, main
from envhub.testing.toy_envs import Corridor


class LibraryError(Exception):
    """What gymnasium's ``DependencyNotInstalled`` is: a library's own error, raised from the ``ImportError``."""


class DrawsThroughALibrary(Corridor):
    render_modes = ("rgb_array",)

    def _render(self, state, index):
        try:
            import pygame  # noqa: F401 - hidden by the test
        except ImportError as exc:
            raise LibraryError('pygame is not installed, run `pip install "gymnasium[classic-control]"`') from exc
        return np.zeros((4, 4, 3), np.uint8)


class Plugin:
    @envhub.hookimpl
    def envhub_register_envs(self, register):
        register("Drawn-v0", DrawsThroughALibrary)


def _record_without(monkeypatch, tmp_path, capsys, env_id, *hidden):
    for name in hidden:
        monkeypatch.setitem(sys.modules, name, None)
    out = tmp_path / "e.gif"
    code = main(["record", env_id, "--steps", "1", "--out", str(out), "-q"])
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "internal error" not in captured.err, captured.err
    assert code == EXIT_ENVHUB_ERROR and captured.out == "" and not out.exists()
    return lines[0]


def test_a_librarys_own_missing_dependency_error_names_the_package_and_its_install_line(tmp_path, capsys, monkeypatch):
    envhub.register_backend("libdraw", Plugin(), replace=True)
    try:
        line = _record_without(monkeypatch, tmp_path, capsys, "libdraw/Drawn-v0", "pygame")
    finally:
        envhub.unregister_backend("libdraw")
    assert line == (
        "envhub: error: Drawing libdraw/Drawn-v0 needs the Python package 'pygame', which is not installed; "
        "install it with: pip install pygame"
    )


@pytest.mark.parametrize(
    "env_id,hidden,install",
    [
        pytest.param(
            "gymnax/CartPole-v1",
            ("pygame",),
            "Drawing gymnax/CartPole-v1 needs the Python package 'pygame', which is not installed; "
            'install it with: pip install "envhub-gymnax[render]"',
            marks=pytest.mark.requires_plugin("gymnax"),
            id="gymnax-pygame",
        ),
        pytest.param(
            "gymnasium/CartPole-v1",
            ("pygame",),
            "Drawing gymnasium/CartPole-v1 needs the Python package 'pygame', which is not installed; "
            'install it with: pip install "envhub-gymnasium[render]"',
            marks=pytest.mark.requires_plugin("gymnasium"),
            id="gymnasium-pygame",
        ),
        pytest.param(
            "pgx/tic_tac_toe",
            ("cairosvg",),
            "'cairosvg', which is not installed; install the plugin's render extra: pip install \"envhub-pgx[render]\"",
            marks=pytest.mark.requires_plugin("pgx"),
            id="pgx-cairosvg",
        ),
        pytest.param(
            "envpool/HalfCheetah-v4",
            ("mujoco",),
            "'mujoco', which is not installed; pip install \"envhub-envpool[mujoco-render]\"",
            marks=pytest.mark.requires_plugin("envpool"),
            id="envpool-mujoco",
        ),
    ],
)
def test_every_backends_missing_renderer_is_its_install_line(tmp_path, capsys, monkeypatch, env_id, hidden, install):
    line = _record_without(monkeypatch, tmp_path, capsys, env_id, *hidden)
    assert line.startswith("envhub: error: ") and install in line, line
