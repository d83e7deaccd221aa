"""Installed backends from entry-point metadata alone: what plain ``envhub list`` shows, importing no plugin.

No plugin module runs here, so no backend library and no jax load: a row's status comes from the
distribution's metadata (its envhub range, its requirements) and the plugin's source (``ENVHUB_API = 1``
read as text). What only running the plugin shows (an import or hook that raises, a backend's note)
needs ``envhub list --check``.
"""

from __future__ import annotations

import ast
import importlib.util
import os
from importlib import metadata
from importlib.machinery import PathFinder

from envhub.errors import BackendNotInstalledError, DuplicatePrefixError, EnvhubError, PluginLoadError
from envhub.registry import plugin_api
from envhub.registry.hookspecs import API_ATTRIBUTE
from envhub.registry.specs import BackendStatus

ENTRY_POINT_GROUP = "envhub.backends"
#: Set (not "0") to read no entry points: only in-process registrations count.
AUTOLOAD_SWITCH = "ENVHUB_DISABLE_PLUGIN_AUTOLOAD"
#: A comma-separated list of prefixes: only those entry points are considered.
SELECT_SWITCH = "ENVHUB_PLUGINS"


def switches() -> dict[str, str]:
    """The plugin switches set in the environment (``AUTOLOAD_SWITCH``, ``SELECT_SWITCH``) and their values."""
    found = {}
    if os.environ.get(AUTOLOAD_SWITCH, "") not in ("", "0"):
        found[AUTOLOAD_SWITCH] = os.environ[AUTOLOAD_SWITCH]
    if os.environ.get(SELECT_SWITCH):
        found[SELECT_SWITCH] = os.environ[SELECT_SWITCH]
    return found


def installed_backends() -> list[BackendStatus]:
    """Every backend the entry points declare (as the switches select), sorted by prefix; imports no plugin."""
    active = switches()
    if AUTOLOAD_SWITCH in active:
        return []
    only = {p.strip().lower() for p in active[SELECT_SWITCH].split(",")} if SELECT_SWITCH in active else None
    found: dict[str, list[metadata.EntryPoint]] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if only is None or ep.name.lower() in only:
            found.setdefault(ep.name.lower(), []).append(ep)
    rows = []
    for prefix, eps in sorted(found.items()):
        origins = list(dict.fromkeys(ep.dist.name if ep.dist is not None else ep.value for ep in eps))
        if len({plugin_api.normalize(o) for o in origins}) > 1:
            first = eps[0]
            version = first.dist.version if first.dist is not None else ""
            error = DuplicatePrefixError(prefix, origins[0], origins[1])
            rows.append(BackendStatus(prefix, origins[0], version, "error", str(error)))
        else:
            rows.append(metadata_status(prefix, eps[0]))
    return rows


def metadata_status(prefix: str, entry_point: metadata.EntryPoint) -> BackendStatus:
    """The row of one entry-point backend from its metadata and source, without importing it."""
    dist = entry_point.dist
    origin = dist.name if dist is not None else entry_point.value
    version = dist.version if dist is not None else ""
    described = f"{origin} {version}".strip()
    api: int | None = None
    try:
        problem = plugin_api.core_range_problem(prefix, described, dist)
        if problem is not None:
            raise problem
        source = _source(entry_point.module)
        if source is None:
            not_found = ModuleNotFoundError(f"No module named {entry_point.module!r}", name=entry_point.module)
            raise plugin_api.missing_error(prefix, origin, entry_point, not_found)
        try:
            declared = declared_in_source(source) if not entry_point.attr else None
        except (SyntaxError, ValueError) as exc:
            raise PluginLoadError(prefix, origin, exc) from None
        api = plugin_api.declared_api(_Declared(declared), prefix, described)
        problem = plugin_api.api_problem(prefix, described, api)
        if problem is not None:
            raise problem
    except BackendNotInstalledError as exc:
        return BackendStatus(prefix, origin, version, "missing", str(exc), api)
    except EnvhubError as exc:
        return BackendStatus(prefix, origin, version, "error", str(exc), api)
    missing = plugin_api.missing_requirements(dist)
    if missing:
        hint = plugin_api.install_hint(prefix, origin, missing[0], dist)
        return BackendStatus(prefix, origin, version, "missing", f"not installed: {', '.join(missing)}; {hint}", api)
    return BackendStatus(prefix, origin, version, "ok", "", api)


def declared_in_source(source: str) -> object:
    """The literal a module's text assigns to ``ENVHUB_API`` at its top level, or None (none, or not a literal).

    Raises:
        SyntaxError: the text is not Python (importing the module would fail the same way).
    """
    for node in ast.parse(source).body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if any(isinstance(t, ast.Name) and t.id == API_ATTRIBUTE for t in targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


class _Declared:
    """Stands for a plugin module in ``plugin_api.declared_api``: only its ``ENVHUB_API``."""

    def __init__(self, api: object) -> None:
        setattr(self, API_ATTRIBUTE, api)


def _source(module: str) -> str | None:
    """The text of ``module``, found without running it (nor its parent packages); ``""`` if it has no text."""
    parts = module.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level name: nothing is imported to find it
        for i in range(1, len(parts)):
            locations = spec.submodule_search_locations if spec is not None else None
            spec = PathFinder.find_spec(".".join(parts[: i + 1]), locations) if locations is not None else None
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    try:
        return spec.loader.get_source(spec.name) or ""  # type: ignore[union-attr]
    except (AttributeError, ImportError, OSError):  # no loader, or one without text (a compiled module)
        return ""


__all__ = [
    "AUTOLOAD_SWITCH",
    "ENTRY_POINT_GROUP",
    "SELECT_SWITCH",
    "declared_in_source",
    "installed_backends",
    "metadata_status",
    "switches",
]
