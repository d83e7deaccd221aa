"""Find backend plugins through entry points, load each one only when its prefix is used.

Discovery reads entry-point metadata only; a plugin module is imported when its prefix is first used or its status
asked for (``list_backends(load=True)``), a failure recorded against it alone. Read when a ``Registry`` is made:

- ``ENVHUB_DISABLE_PLUGIN_AUTOLOAD=1``: read no entry points (only in-process registrations).
- ``ENVHUB_PLUGINS=gymnax,brax``: consider only these entry points.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from importlib import metadata
from typing import Any

import pluggy

from envhub.core.arguments import positive_int
from envhub.core.env import Environment, validate_actions_value
from envhub.errors import (
    BackendNotInstalledError,
    DuplicatePrefixError,
    EnvhubError,
    EnvUnavailableError,
    PluginLoadError,
    UnknownEnvError,
)
from envhub.registry import hookspecs, plugin_api
from envhub.registry.discovery import ENTRY_POINT_GROUP, metadata_status
from envhub.registry.hook_probe import probe
from envhub.registry.kwargs_check import check as check_kwargs
from envhub.registry.loading import (
    AUTOLOAD_SWITCH,
    PLUGIN_FAULTS,
    SELECT_SWITCH,
    build,
    call_hook,
    load_plugin,
    spec_collector,
    switches,
    unknown_backend,
)
from envhub.registry.plugin_api import api_problem, core_range_problem, install_hint, missing_requirements, normalize
from envhub.registry.specs import BackendStatus, EnvSpec, lookup_prefix, split_id
from envhub.registry.specs import check_prefix as _check_prefix


@dataclasses.dataclass
class _Backend:
    prefix: str
    origin: str  # distribution name, or "<in-process>"
    version: str
    entry_point: metadata.EntryPoint | None = None
    plugin: Any = None
    error: EnvhubError | None = None
    envs: dict[str, EnvSpec] | None = None
    api: int | None = None


class Registry:
    """A set of backends: entry-point plugins plus in-process registrations.

    ``envhub.make`` and friends use one default registry; tests create their own.
    """

    def __init__(self, *, autoload: bool | None = None, only: Iterable[str] | None = None):
        # The switches this registry obeys from the environment (arguments win); "no backend" errors name them.
        self._switches = switches()
        if autoload is None:
            autoload = AUTOLOAD_SWITCH not in self._switches
        else:
            self._switches.pop(AUTOLOAD_SWITCH, None)
        if only is None and SELECT_SWITCH in self._switches:
            only = self._switches[SELECT_SWITCH].split(",")
        elif only is not None:
            self._switches.pop(SELECT_SWITCH, None)
        self._only = None if only is None else {p.strip().lower() for p in only if p.strip()}
        self._pm = pluggy.PluginManager("envhub")
        self._pm.add_hookspecs(hookspecs)
        self._backends: dict[str, _Backend] = {}
        if autoload:
            self._discover()

    # --- discovery and loading ---------------------------------------------------------------

    def _discover(self) -> None:
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            prefix = ep.name.lower()
            if self._only is not None and prefix not in self._only:
                continue
            dist = ep.dist
            origin = dist.name if dist is not None else ep.value
            version = dist.version if dist is not None else ""
            known = self._backends.get(prefix)
            if known is None:
                self._backends[prefix] = _Backend(prefix, origin, version, entry_point=ep)
            elif normalize(known.origin) != normalize(origin):
                known.error = DuplicatePrefixError(prefix, known.origin, origin)

    def register_backend(self, prefix: str, plugin: Any, *, replace: bool = False) -> None:
        """Register ``plugin`` (an object or module with ``@envhub.hookimpl`` functions) in-process.

        A refused call changes nothing: no prefix half-registered, a replaced backend kept.

        Raises:
            DuplicatePrefixError: ``prefix`` is taken and ``replace`` is false.
            PluginLoadError: the plugin is refused (``PluginIncompatibleError``: its declarations).
        """
        prefix = _check_prefix(prefix)
        known = self._backends.get(prefix)
        if known is not None and not replace:
            raise DuplicatePrefixError(prefix, known.origin, "<in-process>")
        old = known.plugin if known is not None else None
        if old is not None:
            self._pm.unregister(name=prefix)
        backend = _Backend(prefix, "<in-process>", "")
        try:
            self._activate(backend, plugin)
        except EnvhubError:
            if old is not None:
                self._pm.register(old, name=prefix)
            raise
        self._backends[prefix] = backend

    def unregister_backend(self, prefix: str) -> None:
        """Forget the backend ``prefix`` (no error if it is unknown)."""
        backend = self._backends.pop(lookup_prefix(prefix), None)
        if backend is not None and backend.plugin is not None:
            self._pm.unregister(name=backend.prefix)

    def _activate(self, backend: _Backend, plugin: Any) -> None:
        """Check ``plugin``'s declarations and register its hooks as ``backend``'s; if refused, raise, changing nothing."""
        api = plugin_api.declared_api(plugin, backend.prefix, _described(backend))
        problem = api_problem(backend.prefix, _described(backend), api)
        if problem is not None:
            backend.api = api  # `envhub list` shows the API it declares
            raise problem
        plugin_api.declared_wrapper(plugin, backend.prefix, _described(backend))  # callable, if declared
        try:
            self._pm.register(plugin, name=backend.prefix)
            self._pm.check_pending()  # a hookimpl with no matching hookspec (a typo) is refused here
        except PLUGIN_FAULTS as exc:
            if self._pm.get_plugin(backend.prefix) is plugin:
                self._pm.unregister(name=backend.prefix)
            raise PluginLoadError(backend.prefix, backend.origin, exc) from exc
        backend.plugin, backend.api = plugin, api

    def _load(self, prefix: str) -> _Backend:
        backend = self._backend(prefix)
        if backend.error is not None:
            raise backend.error
        if backend.plugin is None:
            assert backend.entry_point is not None
            backend.error = core_range_problem(prefix, _described(backend), backend.entry_point.dist)
            if backend.error is not None:
                raise backend.error
            try:
                self._activate(backend, load_plugin(backend.prefix, backend.origin, backend.entry_point))
            except EnvhubError as exc:
                backend.error = exc  # `envhub list` reports it from now on
                raise
        return backend

    def _backend(self, prefix: str) -> _Backend:
        backend = self._backends.get(lookup_prefix(prefix))
        if backend is None:
            raise unknown_backend(prefix, list(self._backends), ENTRY_POINT_GROUP, self._switches)
        return backend

    def plugin(self, prefix: str) -> Any:
        """The loaded plugin object (usually its module) of backend ``prefix``; envhub errors if it cannot load."""
        return self._load(prefix).plugin

    # --- environments ------------------------------------------------------------------------

    def _envs(self, prefix: str, refresh: bool = False, *, probing: bool = False) -> dict[str, EnvSpec] | None:
        """The envs of ``prefix`` from its ``envhub_register_envs`` (cached); ``probing``: None if it needs a new import."""
        backend = self._load(prefix)
        if backend.envs is not None and not refresh:
            return backend.envs
        envs: dict[str, EnvSpec] = {}
        register = spec_collector(backend.prefix, envs)
        others = [p for n, p in self._pm.list_name_plugin() if n != backend.prefix]
        caller = self._pm.subset_hook_caller("envhub_register_envs", remove_plugins=others)
        hook = functools.partial(call_hook, backend.prefix, backend.origin, backend.entry_point, "envhub_register_envs")
        try:
            if not probing:
                hook(caller, register=register)
            elif not probe(lambda: hook(caller, register=register)):  # it reached an import of a library not loaded
                return None
        except EnvhubError as exc:
            backend.error = exc  # `envhub list` reports it from now on
            raise
        backend.envs = envs
        return envs

    def spec(self, env_id: str) -> EnvSpec:
        """Return the ``EnvSpec`` of ``env_id``, or raise a helpful error."""
        prefix, name = split_id(env_id)
        envs = self._envs(prefix) or {}
        if name not in envs:
            envs = self._envs(prefix, refresh=True) or {}  # the backend may have gained envs since
        if name not in envs:
            raise UnknownEnvError(prefix.lower(), name, sorted(envs))
        return envs[name]

    def make(
        self,
        env_id: str,
        *,
        num_envs: int | None = None,
        mesh: Any = None,
        validate_actions: bool | str = True,
        **kwargs: Any,
    ) -> Environment[Any, Any, Any]:
        """Build ``env_id``; ``num_envs=N`` batches it, ``mesh`` (one axis) shards that batch; ``kwargs`` go to the backend.

        ``validate_actions``: ``True``, ``"strict"`` or ``False`` (see ``Environment.step``, docs/errors.md).
        """
        from envhub.wrappers import VmapEnvironment

        num_envs = positive_int("num_envs", num_envs, none="one environment")
        validate_actions_value(validate_actions)
        spec = self.spec(env_id)
        if spec.factory is None:
            raise EnvUnavailableError(spec.id, spec.unavailable or "no factory")
        owner = self._backend(spec.prefix)
        check_kwargs(spec, kwargs, _described(owner))  # before the backend sees them
        if spec.batching == "native":
            kwargs["num_envs"] = num_envs
        env = build(spec, owner.origin, owner.entry_point, kwargs)
        env.unwrapped.id = spec.id
        env.validate_actions = validate_actions
        if spec.batching == "vmap" and num_envs is not None:
            env = VmapEnvironment(env, num_envs)
        if mesh is not None:
            from envhub.wrappers.sharding import shard

            env = shard(env, mesh)
        return env

    def list_envs(self, prefix: str) -> list[EnvSpec]:
        """Every environment the backend ``prefix`` offers, available or not, sorted by name."""
        return sorted((self._envs(prefix, refresh=True) or {}).values(), key=lambda s: s.name.lower())

    def list_backends(self, *, deep: bool = False, load: bool = True) -> list[BackendStatus]:
        """The status of every known backend; importing each plugin module, never a backend library.

        A hook that raises shows as status ``error``. ``envhub_register_envs`` runs up to its first import of
        a library not loaded yet (``envhub.registry.hook_probe``): a hook that raises after importing its backend shows
        only once seen failing, or with ``deep=True``, which runs every hook in full (importing the libraries).
        ``load=False`` imports no plugin: one not loaded yet is reported from its metadata (``discovery``).
        """
        rows = []
        for prefix in sorted(self._backends):
            backend = self._backends[prefix]
            if not (load or deep) and backend.plugin is None and backend.error is None and backend.entry_point:
                rows.append(metadata_status(prefix, backend.entry_point))
                continue
            status, reason = "ok", ""
            try:
                self._envs(prefix, probing=not deep)
                dist = backend.entry_point.dist if backend.entry_point is not None else None
                missing = missing_requirements(dist)
                if missing:
                    hint = install_hint(prefix, backend.origin, missing[0], dist)
                    status, reason = "missing", f"not installed: {', '.join(missing)}; {hint}"
            except BackendNotInstalledError as exc:
                status, reason = "missing", str(exc)
            except EnvhubError as exc:
                status, reason = "error", str(exc)
            if status == "ok":
                status, reason = self._note(prefix)
            rows.append(BackendStatus(prefix, backend.origin, backend.version, status, reason, backend.api))
        return rows

    def _note(self, prefix: str) -> tuple[str, str]:
        """``("ok", the backend's own note)`` from hook ``envhub_backend_note``, or ``("error", why)`` if it raises."""
        backend = self._backends[prefix]
        others = [p for n, p in self._pm.list_name_plugin() if n != prefix]
        caller = self._pm.subset_hook_caller("envhub_backend_note", remove_plugins=others)
        try:
            note = call_hook(prefix, backend.origin, backend.entry_point, "envhub_backend_note", caller)
            return "ok", str(note or "")
        except EnvhubError as exc:  # a note must never break `envhub list`
            return "error", str(exc)

    @property
    def prefixes(self) -> list[str]:
        """The known prefixes, loaded or not."""
        return sorted(self._backends)


def _described(backend: _Backend) -> str:
    return f"{backend.origin} {backend.version}".strip()


__all__ = ["ENTRY_POINT_GROUP", "Registry"]
