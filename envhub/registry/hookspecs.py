"""The hooks a backend plugin implements (with ``@envhub.hookimpl``), and the attributes it may declare."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol

import pluggy

if TYPE_CHECKING:
    from envhub.core.env import Environment

hookspec = pluggy.HookspecMarker("envhub")
hookimpl = pluggy.HookimplMarker("envhub")


class EnvFactory(Protocol):
    """Build one environment: ``factory(**kwargs)`` (plus ``num_envs=`` when ``batching="native"``)."""

    def __call__(self, **kwargs: Any) -> Any: ...


class RegisterEnv(Protocol):
    """The ``register`` callback handed to ``envhub_register_envs``."""

    def __call__(
        self,
        name: str,
        factory: EnvFactory | Callable[..., Any] | None,
        *,
        batching: str = "vmap",
        unavailable: str | None = None,
        description: str = "",
        check_options: dict[str, Any] | None = None,
        kwargs: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None,
    ) -> None: ...


class WrapObject(Protocol):
    """A plugin's optional ``wrap_object(env, **kwargs)``: a user's own backend environment *object* as an envhub env.

    ``envhub.interop.from_gymnax(env, params)`` and ``from_brax(env, **kwargs)`` call it on the plugin of
    that prefix. A plugin whose ``wrap_object`` is not callable is refused there (``PluginIncompatibleError``).
    """

    def __call__(self, env: Any, /, **kwargs: Any) -> Environment[Any, Any, Any]: ...


# What a plugin declares besides its hooks: attributes of its hook module (or object), read by envhub.
#: ``ENVHUB_API: int``, the envhub plugin API the plugin was written for (``ENVHUB_API = 1``); without it, API 1.
#: Not an int, or an API this envhub does not support: refused with ``PluginIncompatibleError``.
API_ATTRIBUTE: Final = "ENVHUB_API"
#: ``wrap_object: WrapObject``, optional (see ``WrapObject``).
WRAP_ATTRIBUTE: Final = "wrap_object"


@hookspec
def envhub_register_envs(register: RegisterEnv) -> None:
    """Call ``register(name, factory, ...)`` once for every environment this backend offers.

    ``factory(**kwargs)`` returns an ``envhub.Environment``; import the backend library inside it
    (or inside this hook), never at module level. ``batching="vmap"`` lets envhub batch a JAX-native
    environment for ``num_envs``; ``batching="native"`` passes ``num_envs`` to the factory.
    ``unavailable="reason"`` lists an environment that cannot run here; ``make`` raises the reason.
    ``check_options`` sets ``envhub.testing.Options`` fields used by ``envhub check`` and the kit,
    e.g. ``{"time_limit_kwarg": "max_steps_in_episode"}``. ``kwargs`` declares the keyword arguments
    ``make`` may pass: ``{name: envhub.Kwarg(type, default, doc)}``, or a callable returning that
    (called by ``make``, so it may import the backend); without it, the factory's signature (see ``envhub.core.kwargs``).
    """


@hookspec(firstresult=True)
def envhub_backend_note() -> str | None:
    """Return a one-line note ``envhub list`` shows under this backend (e.g. a degraded fast path), or ``None``.

    Optional. Keep it cheap: ``envhub list`` calls it, so never import the backend library here.
    """


__all__ = [
    "API_ATTRIBUTE",
    "WRAP_ATTRIBUTE",
    "EnvFactory",
    "RegisterEnv",
    "WrapObject",
    "envhub_backend_note",
    "envhub_register_envs",
    "hookimpl",
    "hookspec",
]
