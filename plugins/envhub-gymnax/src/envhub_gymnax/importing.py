"""gymnax's ids and environments, importing only the gymnax modules an environment needs.

Importing any gymnax module runs ``gymnax/__init__.py``, which imports every environment, and some of those import
matplotlib, seaborn and scipy for their drawings: about 1.5 s (13 s on a loaded machine) before the first
environment. Where gymnax is not imported yet, its ids come from ``ENVS`` and an environment is built from its own
module (``import_alone``); a package skipped that way runs its ``__init__`` the first time it is asked for anything
it lacks, so ``import gymnax`` afterwards is the whole gymnax. Where gymnax is imported, its registry answers (ids it
registered at run time included).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

#: gymnax 1.0's built-in ids in its order, each with its class (module under gymnax.environments : name);
#: checked against gymnax's registry by the plugin's tests.
ENVS = {
    "CartPole-v1": "classic_control.cartpole:CartPole",
    "Pendulum-v1": "classic_control.pendulum:Pendulum",
    "Acrobot-v1": "classic_control.acrobot:Acrobot",
    "MountainCar-v0": "classic_control.mountain_car:MountainCar",
    "MountainCarContinuous-v0": "classic_control.continuous_mountain_car:ContinuousMountainCar",
    "Asterix-MinAtar": "minatar.asterix:MinAsterix",
    "Breakout-MinAtar": "minatar.breakout:MinBreakout",
    "Freeway-MinAtar": "minatar.freeway:MinFreeway",
    "Seaquest-MinAtar": "minatar.seaquest:MinSeaquest",
    "SpaceInvaders-MinAtar": "minatar.space_invaders:MinSpaceInvaders",
    "Catch-bsuite": "bsuite.catch:Catch",
    "DeepSea-bsuite": "bsuite.deep_sea:DeepSea",
    "MemoryChain-bsuite": "bsuite.memory_chain:MemoryChain",
    "UmbrellaChain-bsuite": "bsuite.umbrella_chain:UmbrellaChain",
    "DiscountingChain-bsuite": "bsuite.discounting_chain:DiscountingChain",
    "MNISTBandit-bsuite": "bsuite.mnist:MNISTBandit",
    "SimpleBandit-bsuite": "bsuite.bandit:SimpleBandit",
    "FourRooms-misc": "misc.rooms:FourRooms",
    "MetaMaze-misc": "misc.meta_maze:MetaMaze",
    "PointRobot-misc": "misc.point_robot:PointRobot",
    "BernoulliBandit-misc": "misc.bernoulli_bandit:BernoulliBandit",
    "GaussianBandit-misc": "misc.gaussian_bandit:GaussianBandit",
    "Reacher-misc": "misc.reacher:Reacher",
    "Swimmer-misc": "misc.swimmer:Swimmer",
    "Pong-misc": "misc.pong:Pong",
    "FrozenLake-misc": "misc.frozen_lake:FrozenLake",
}

_LOCK = threading.RLock()


def registered_envs() -> list[str]:
    """gymnax's ids: its registry's where gymnax is imported, else ``ENVS``."""
    registration = sys.modules.get("gymnax.registration")
    return list(registration.registered_envs) if registration is not None else list(ENVS)


def make(name: str, **kwargs: Any) -> tuple[Any, Any]:
    """``gymnax.make(name, **kwargs)``: the environment and its default params; a built-in id's class is imported
    alone (a gymnax whose layout differs from ``ENVS`` is imported whole)."""
    if name in ENVS:
        module, _, attr = ENVS[name].partition(":")
        try:
            factory = getattr(import_alone(f"gymnax.environments.{module}"), attr)
        except (ImportError, AttributeError):
            factory = None
        if factory is not None:
            env = factory(**kwargs)  # what gymnax.make does with a built-in id
            return env, env.default_params
    return importlib.import_module("gymnax.registration").make(name, **kwargs)


def import_alone(name: str) -> ModuleType:
    """Import module ``name`` without running the ``__init__`` of its packages not imported yet (see the module's
    docstring); each such package runs it when first asked for an attribute that is not one of its modules."""
    with _LOCK:
        parts = name.split(".")
        for depth in range(1, len(parts)):
            package = ".".join(parts[:depth])
            if package not in sys.modules:
                _defer(package)
    return importlib.import_module(name)


def _defer(name: str) -> None:
    """Put package ``name`` in ``sys.modules`` with its ``__init__`` not run, and run it on demand (PEP 562)."""
    spec = importlib.util.find_spec(name)  # its parent is in sys.modules already: nothing runs
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        raise ModuleNotFoundError(f"No package named {name!r}", name=name)
    package = importlib.util.module_from_spec(spec)

    def __getattr__(attr: str) -> Any:  # noqa: N807 - a module's own attribute hook
        if importlib.util.find_spec(f"{name}.{attr}") is not None:
            return importlib.import_module(f"{name}.{attr}")  # a module of the package: no need of its __init__
        with _LOCK:
            if package.__dict__.get("__getattr__") is __getattr__:
                del package.__getattr__
                try:
                    spec.loader.exec_module(package)  # type: ignore[union-attr]
                except BaseException:
                    package.__getattr__ = __getattr__  # type: ignore[attr-defined]
                    raise
        return getattr(package, attr)

    package.__getattr__ = __getattr__  # type: ignore[attr-defined]
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, package)


__all__ = ["ENVS", "import_alone", "make", "registered_envs"]
