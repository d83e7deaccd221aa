"""Keeping a plugin's faults inside the plugin: importing it, calling its hooks and factories, hidden prefixes.

Whatever a plugin raises there, ``SystemExit`` included, becomes an envhub error naming the plugin
(and the environment); envhub's own errors pass through, and a ``KeyboardInterrupt`` still interrupts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any

from envhub.core.bounds import bounds_rule, first_outside, leaf_ranges
from envhub.core.env import Environment
from envhub.core.kwargs import short_repr
from envhub.errors import EnvhubError, InvalidArgumentError, PluginLoadError, UnknownBackendError
from envhub.registry.discovery import AUTOLOAD_SWITCH, SELECT_SWITCH, switches
from envhub.registry.factory_errors import refusal
from envhub.registry.plugin_api import missing_error, plugin_install_line
from envhub.registry.specs import BATCHING_MODES, EnvSpec

#: What a plugin may raise that must not escape it: every ``Exception`` and ``SystemExit`` (not ``KeyboardInterrupt``).
PLUGIN_FAULTS: tuple[type[BaseException], ...] = (Exception, SystemExit)


def load_plugin(prefix: str, origin: str, entry_point: metadata.EntryPoint) -> Any:
    """Import the module an entry point names; an envhub error if it raises."""
    try:
        return entry_point.load()
    except ModuleNotFoundError as exc:
        raise missing_error(prefix, origin, entry_point, exc) from exc
    except PLUGIN_FAULTS as exc:
        raise PluginLoadError(prefix, origin, exc) from exc


def call_hook(prefix: str, origin: str, entry_point: Any, hook: str, caller: Callable[..., Any], **kwargs: Any) -> Any:
    """Call one plugin's ``hook`` through ``caller``; an envhub error naming the plugin and hook if it raises."""
    try:
        return caller(**kwargs)
    except EnvhubError:
        raise
    except ModuleNotFoundError as exc:
        raise missing_error(prefix, origin, entry_point, exc) from exc
    except PLUGIN_FAULTS as exc:
        raise PluginLoadError(prefix, origin, exc, during=f"in {hook}()") from exc


def build(spec: EnvSpec, origin: str, entry_point: Any, kwargs: dict[str, Any]) -> Environment[Any, Any, Any]:
    """``spec.factory(**kwargs)``; an envhub error naming the plugin, the environment and the cause if it fails.

    A refusal of the user's arguments keeps the class the factory raised (``envhub.registry.factory_errors``); any
    other exception is the plugin's fault, a ``PluginLoadError``. A kwarg that sets a parameter is then checked
    against the env's ``params_bounds``, as ``init(params=...)`` checks it: at make, not at the first rollout.
    """
    assert spec.factory is not None
    try:
        env = spec.factory(**kwargs)
    except EnvhubError:
        raise
    except ModuleNotFoundError as exc:
        raise missing_error(spec.prefix, origin, entry_point, exc) from exc
    except (ValueError, TypeError, LookupError, AssertionError) as exc:  # the user's arguments, if it names them
        refused = refusal(spec.id, spec.prefix, origin, kwargs, exc)
        raise (refused or PluginLoadError(spec.prefix, origin, exc, during=_making(spec, kwargs))) from exc
    except PLUGIN_FAULTS as exc:
        raise PluginLoadError(spec.prefix, origin, exc, during=_making(spec, kwargs)) from exc
    if not isinstance(env, Environment):
        problem = TypeError(f"it returned {type(env).__name__}, not an envhub.Environment")
        raise PluginLoadError(spec.prefix, origin, problem, during=_making(spec, kwargs))
    _check_parameter_kwargs(spec, origin, env, kwargs)
    return env


def _check_parameter_kwargs(
    spec: EnvSpec, origin: str, env: Environment[Any, Any, Any], kwargs: dict[str, Any]
) -> None:
    """Refuse a kwarg that set a parameter (a field ``name`` of ``env.default_params`` that ``env.params_bounds``
    bounds) to a value out of its bounds: the check of ``init(params=...)`` (``envhub.core.bounds``), at make."""
    if not any(k != "num_envs" for k in kwargs):
        return
    try:
        ranges = leaf_ranges(spec.id, env.default_params, env.params_bounds)
    except PLUGIN_FAULTS as exc:
        env.close()
        raise PluginLoadError(spec.prefix, origin, exc, during=f"in params_bounds of {spec.id!r}") from exc
    for name, value in kwargs.items():
        for _, leaf, bounds in ranges:
            if leaf in (f"params.{name}", f"params[{name!r}]") and first_outside(value, bounds) is not None:
                env.close()
                raise InvalidArgumentError(
                    f"make({spec.id!r}, ...): {name}={short_repr(value)} is out of range: it must be "
                    f"{bounds_rule(bounds)} (the bounds of the parameter {leaf}); give a value in that range."
                )


def spec_collector(prefix: str, envs: dict[str, EnvSpec]) -> Callable[..., None]:
    """The ``register`` callback handed to a backend's ``envhub_register_envs``: validates, then adds to ``envs``."""

    def register(
        name: str,
        factory: Callable[..., Any] | None,
        *,
        batching: str = "vmap",
        unavailable: str | None = None,
        description: str = "",
        check_options: dict[str, Any] | None = None,
        kwargs: Any = None,
    ) -> None:
        if not isinstance(name, str) or not name or name != name.strip():
            raise ValueError(f"environment name {name!r} must be a non-empty string without surrounding spaces")
        if name in envs:
            raise ValueError(f"environment name {name!r} registered twice")
        if factory is None and unavailable is None:
            raise ValueError(f"{name!r} needs a factory, or unavailable='reason'")
        if factory is not None and not callable(factory):
            raise ValueError(f"factory for {name!r} is not callable: {factory!r}")
        if batching not in BATCHING_MODES:
            raise ValueError(f"batching={batching!r} for {name!r}; use one of {BATCHING_MODES}")
        if kwargs is not None and not (callable(kwargs) or isinstance(kwargs, Mapping)):
            raise ValueError(
                f"kwargs for {name!r} must be a mapping of names to envhub.Kwarg, or a callable returning one"
            )
        options = dict(check_options or {})
        envs[name] = EnvSpec(prefix, name, factory, batching, unavailable, description, options, kwargs)

    return register


def _making(spec: EnvSpec, kwargs: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if not (k == "num_envs" and v is None))
    return f"while making {spec.id!r}" + (f" with {shown}" if shown else "")


def unknown_backend(prefix: str, known: list[str], group: str, active: dict[str, str]) -> UnknownBackendError:
    """The error for a prefix no backend has; it names a switch in ``active`` that hid an installed plugin."""
    install = plugin_install_line(prefix)
    if not active:
        return UnknownBackendError(prefix, known, install)
    owners = [ep for ep in metadata.entry_points(group=group) if ep.name.lower() == prefix.lower()]
    var = AUTOLOAD_SWITCH if AUTOLOAD_SWITCH in active else SELECT_SWITCH
    value = active[var]
    fix = (
        f"unset {var} (or set it to 0)"
        if var == AUTOLOAD_SWITCH
        else f"add it ({var}={value.rstrip(',')},{prefix.lower()}) or unset {var}"
    )
    if owners:
        dist = owners[0].dist
        owner = f"The plugin {dist.name!r}" if dist is not None else f"An installed plugin ({owners[0].value})"
        note = f"{owner} provides {prefix.lower()!r}, but {var}={value!r} hides it: {fix}."
    else:
        note = (
            f"{var}={value!r} is set, so envhub reads {'no' if var == AUTOLOAD_SWITCH else 'only those'} "
            f"plugin entry points: if {prefix.lower()!r} is installed, {fix}; else install it: {install}."
        )
    return UnknownBackendError(prefix, known, install, note=note)


__all__ = [
    "AUTOLOAD_SWITCH",
    "PLUGIN_FAULTS",
    "SELECT_SWITCH",
    "build",
    "call_hook",
    "load_plugin",
    "spec_collector",
    "switches",
    "unknown_backend",
]
