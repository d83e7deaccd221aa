"""Interop: envhub envs handed to other libraries' APIs (the exports), and users' own env objects as envhub ones.

One module per target and one entry point each, listed once in ``_PUBLIC``: ``envhub.interop.to_X`` imports only
what ``X`` needs (gymnasium, pettingzoo, gymnax, jaxmarl, stable-baselines3, torch are imported by their own module,
never by ``import envhub`` or ``import envhub.interop``). Every export follows one contract
(``envhub.interop.contract``: refusals, final_obs, close and pickling), converts spaces by one rule
(``envhub.interop.leaves`` over ``envhub.spaces.convert``) and steps from Python through ``compiled.Runner``
(gymnasium, SB3, PettingZoo, TorchRL) or hands envhub's functions to JAX code that jits itself (gymnax, JaxMARL).
docs/interop.md holds the policies; CONTRIBUTING says how to add an export.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from envhub.errors import MissingDependencyError

if TYPE_CHECKING:  # what type checkers and readers see; at run time __getattr__ imports each on first use
    from envhub.host.gymnasium_spaces import to_gymnasium_space as to_gymnasium_space
    from envhub.interop.gym_env import to_gymnasium as to_gymnasium
    from envhub.interop.gym_vector import to_gymnasium_vector as to_gymnasium_vector
    from envhub.interop.gymnax_export import to_gymnax as to_gymnax
    from envhub.interop.jaxmarl_export import to_jaxmarl as to_jaxmarl
    from envhub.interop.jumanji_export import to_jumanji as to_jumanji
    from envhub.interop.objects import from_brax as from_brax
    from envhub.interop.objects import from_gymnax as from_gymnax
    from envhub.interop.pettingzoo_aec import to_pettingzoo_aec as to_pettingzoo_aec
    from envhub.interop.pettingzoo_parallel import to_pettingzoo_parallel as to_pettingzoo_parallel
    from envhub.interop.registration import register_gymnasium as register_gymnasium
    from envhub.interop.sb3 import to_sb3_vec_env as to_sb3_vec_env
    from envhub.interop.sebulba import sebulba_factory as sebulba_factory
    from envhub.interop.stoa_export import to_stoa as to_stoa
    from envhub.interop.torchrl_export import to_torchrl as to_torchrl

#: Each public name's module: an export is one module plus one line here (and its name in the imports above, which
#: type checkers and the API reference read).
_PUBLIC = {
    "to_gymnasium": "envhub.interop.gym_env",
    "to_gymnasium_vector": "envhub.interop.gym_vector",
    "to_sb3_vec_env": "envhub.interop.sb3",
    "to_pettingzoo_parallel": "envhub.interop.pettingzoo_parallel",
    "to_pettingzoo_aec": "envhub.interop.pettingzoo_aec",
    "to_gymnax": "envhub.interop.gymnax_export",
    "to_jaxmarl": "envhub.interop.jaxmarl_export",
    "to_jumanji": "envhub.interop.jumanji_export",
    "to_torchrl": "envhub.interop.torchrl_export",
    "to_stoa": "envhub.interop.stoa_export",
    "sebulba_factory": "envhub.interop.sebulba",
    "register_gymnasium": "envhub.interop.registration",
    "to_gymnasium_space": "envhub.host.gymnasium_spaces",
    "from_gymnax": "envhub.interop.objects",
    "from_brax": "envhub.interop.objects",
}


def __getattr__(name: str) -> Any:
    """The public ``name`` from its module, imported on first use; not cached here, so each access asks the module.

    Where the module's library is missing, a function that raises its ``MissingDependencyError`` (the install line)
    when called: ``from envhub.interop import to_torchrl`` works without torch, as every name of ``__all__`` does.
    """
    if name not in _PUBLIC:
        raise AttributeError(f"module 'envhub.interop' has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    except MissingDependencyError as exc:
        return _unavailable(name, exc)


def _unavailable(name: str, exc: MissingDependencyError) -> Any:
    def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise exc.with_traceback(None)  # the same error, its cause (the ImportError) kept

    unavailable.__name__ = unavailable.__qualname__ = name
    unavailable.__doc__ = f"Not available here: {exc}"
    return unavailable


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})


__all__ = sorted(_PUBLIC)
