"""What the registry knows of one environment (``EnvSpec``) and one backend (``BackendStatus``), and env ids."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from envhub.errors import InvalidArgumentError, InvalidIdError

BATCHING_MODES = ("vmap", "native")  # vmap: envhub batches with jax.vmap; native: the factory takes num_envs


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """One environment a backend offers."""

    prefix: str
    name: str
    factory: Callable[..., Any] | None = dataclasses.field(repr=False, compare=False)
    batching: str = "vmap"
    unavailable: str | None = None
    description: str = ""
    #: Fields of ``envhub.testing.Options`` for this env (e.g. its time-limit kwarg).
    check_options: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False)
    #: The kwargs it accepts (``envhub.core.kwargs``): names to ``envhub.Kwarg``, a callable returning them, or None.
    kwargs: Any = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def id(self) -> str:
        return f"{self.prefix}/{self.name}"

    @property
    def available(self) -> bool:
        return self.unavailable is None


@dataclasses.dataclass(frozen=True)
class BackendStatus:
    """What ``envhub list`` shows for one backend."""

    prefix: str
    distribution: str
    version: str
    status: str  # "ok", "missing" (backend library not installed) or "error"
    reason: str = ""
    api: int | None = None  # the plugin API it declares (ENVHUB_API); None: undeclared, taken as 1


def check_options_for(table: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    """A plugin's conformance options for env ``name``: its table's ``"*"`` entry, updated by its ``name`` entry.

    Every plugin keeps its options in this one shape, ``{"*": {...}, "SomeEnv": {...}}``, with fields
    of ``envhub.testing.Options``, and passes the result as ``register(..., check_options=...)``.
    """
    return {**table.get("*", {}), **table.get(name, {})}


def split_id(env_id: object) -> tuple[str, str]:
    """Split ``"prefix/Name"`` at its first slash (names may contain more slashes)."""
    if not isinstance(env_id, str) or "/" not in env_id:
        raise InvalidIdError(env_id)
    prefix, name = env_id.split("/", 1)
    if not prefix.strip() or not name.strip():
        raise InvalidIdError(env_id)
    return prefix, name


def check_prefix(prefix: str) -> str:
    """A backend prefix, lower-cased; ``InvalidArgumentError`` if it is not letters, digits, '_', '.' or '-'."""
    if not isinstance(prefix, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", prefix):
        raise InvalidArgumentError(f"Backend prefix {prefix!r} must be letters, digits, '_', '.' or '-' (no '/').")
    return prefix.lower()


def lookup_prefix(prefix: object) -> str:
    """``prefix`` lower-cased, to look a backend up; ``InvalidArgumentError`` if it is not a str."""
    if not isinstance(prefix, str):
        raise InvalidArgumentError(
            f"Backend prefix {prefix!r:.60} ({type(prefix).__name__}) is not a str; use a prefix such as 'gymnax' "
            "(run `envhub list` to see the installed prefixes)."
        )
    return prefix.lower()


__all__ = [
    "BATCHING_MODES",
    "BackendStatus",
    "EnvSpec",
    "check_options_for",
    "check_prefix",
    "lookup_prefix",
    "split_id",
]
