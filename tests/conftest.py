from __future__ import annotations

import pytest
from toy_envs import ToyPlugin

import envhub


@pytest.fixture
def registry() -> envhub.Registry:
    """A fresh registry with no entry points and the in-process toy backend."""
    reg = envhub.Registry(autoload=False)
    reg.register_backend("toy", ToyPlugin())
    return reg
