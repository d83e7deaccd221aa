from __future__ import annotations

import sys

import pytest

import envhub
from envhub.testing.toy_envs import ToyPlugin

# tests/compat is a frozen third-party plugin with its own tests: they run in the release job, with the
# plugin installed in a venv outside the tree (tests/test_release.py), never in this one.
collect_ignore = ["compat"]


@pytest.fixture
def registry() -> envhub.Registry:
    """A fresh registry with no entry points and the in-process toy backend."""
    reg = envhub.Registry(autoload=False)
    reg.register_backend("toy", ToyPlugin())
    return reg


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A directory on sys.path where tests install fake distributions (see fake_dists.py)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("ENVHUB_PLUGINS", raising=False)
    monkeypatch.delenv("ENVHUB_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("fake_plugin")]:
        del sys.modules[name]
