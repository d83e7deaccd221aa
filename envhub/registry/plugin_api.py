"""Plugin compatibility: the plugin API a plugin declares and the envhub range its distribution requires.

A plugin module declares the API it was written for with ``ENVHUB_API = 1`` (a module attribute,
read when ``envhub list`` or ``make`` imports the plugin module, never a backend library). Its
distribution's ``Requires-Dist: envhub ...`` range is read from metadata alone, before any import.
Undeclared plugins are taken to be written for API 1, the first one.
"""

from __future__ import annotations

import difflib
import re
from importlib import metadata
from typing import Any

from envhub.errors import BackendNotInstalledError, EnvhubError, PluginIncompatibleError, PluginLoadError
from envhub.registry.hookspecs import API_ATTRIBUTE, WRAP_ATTRIBUTE, WrapObject
from envhub.version import __version__

#: The plugin API this core implements (the hooks of ``envhub.registry.hookspecs``).
PLUGIN_API = 1
#: Every plugin API this core can load.
SUPPORTED_APIS: tuple[int, ...] = (1,)
IN_REPO_BACKENDS = (
    "gymnax",
    "gymnasium",
    "envpool",
    "brax",
    "jumanji",
    "craftax",
    "xminigrid",
    "playground",
    "pgx",
    "jaxmarl",
    "ale",
    "jaxatari",
    "octax",
    "factoriax",
)

_REQ = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?([^;)]*)\)?\s*(;.*)?$")
_CLAUSE = re.compile(r"\s*(~=|==|!=|<=|>=|<|>)\s*([0-9][0-9a-zA-Z.*+!-]*)\s*$")


def declared_api(plugin: Any, prefix: str, origin: str) -> int | None:
    """The ``ENVHUB_API`` a plugin object or module declares (``hookspecs.API_ATTRIBUTE``), or None if it declares none.

    Raises:
        PluginIncompatibleError: it is not an int.
    """
    api = getattr(plugin, API_ATTRIBUTE, None)
    if api is not None and (isinstance(api, bool) or not isinstance(api, int)):
        raise PluginIncompatibleError(
            prefix,
            origin,
            f"declares ENVHUB_API = {api!r} ({type(api).__name__}), but it must be an int: the envhub plugin API "
            "it was written for",
            f"declare ENVHUB_API = {PLUGIN_API} in its hook module (the plugin API of this envhub), or update the plugin",
        )
    return api


def declared_wrapper(plugin: Any, prefix: str, origin: str) -> WrapObject | None:
    """The plugin's ``wrap_object`` (``hookspecs.WrapObject``), or None if it has none.

    Raises:
        PluginIncompatibleError: it is not callable.
    """
    wrap = getattr(plugin, WRAP_ATTRIBUTE, None)
    if wrap is not None and not callable(wrap):
        raise PluginIncompatibleError(
            prefix,
            origin,
            f"declares wrap_object = {wrap!r} ({type(wrap).__name__}), which is not callable: envhub.interop calls "
            "wrap_object(env, **kwargs) to wrap a user's own environment object",
            "make wrap_object a function returning an envhub.Environment (envhub.plugin.WrapObject), or update the plugin",
        )
    return wrap


def api_problem(prefix: str, origin: str, api: int | None) -> PluginIncompatibleError | None:
    """The error for a plugin declaring ``api`` (None: undeclared, taken as 1), or None if this core loads it."""
    if (1 if api is None else api) in SUPPORTED_APIS:
        return None
    name = origin.split()[0]
    if name.startswith("<"):  # registered in-process: no distribution to reinstall
        fix = f"port the plugin object to plugin API {PLUGIN_API} (ENVHUB_API = {PLUGIN_API})"
    elif _is_in_repo(prefix, name):
        fix = f"reinstall the backend of this envhub release: {plugin_install_line(prefix)}"
    else:
        fix = f"install a release of {name!r} written for plugin API {PLUGIN_API} (pip install -U {name})"
    return PluginIncompatibleError(
        prefix,
        origin,
        f"was written for envhub plugin API {api}, but this envhub ({__version__}) supports "
        f"plugin API {', '.join(map(str, SUPPORTED_APIS))}",
        f"{fix}, or an envhub that supports API {api}",
    )


def core_range_problem(prefix: str, origin: str, dist: metadata.Distribution | None) -> PluginIncompatibleError | None:
    """The error for a plugin whose distribution requires an envhub range this core is outside of, or None."""
    wanted = core_requirement(dist)
    if not wanted or not excludes_core(wanted):
        return None
    name = origin.split()[0]
    line = core_install_line(wanted)
    return PluginIncompatibleError(
        prefix,
        origin,
        f"requires envhub{wanted}, but envhub {__version__} is installed",
        f"pip install -U {name!r} for a release that accepts envhub {__version__}, or {line}"
        if line
        else f"pip install -U {name!r} for a release that accepts envhub {__version__}; no release of this envhub "
        f"is 1.0 or later (the envhub 1.x on PyPI is an unrelated project: do not install it), so ask the "
        f"plugin's author for a range below 1 (envhub{compatible_core_range('0.1')})",
    )


def core_install_line(wanted: str) -> str | None:
    """A pip line for an envhub in ``wanted`` that can never pick PyPI's unrelated envhub 1.x, or None if none can."""
    clauses = [m.groups() for m in map(_CLAUSE.match, wanted.split(",")) if m]
    if any(_caps_below_one(op, raw) for op, raw in clauses):
        return f'pip install "envhub{wanted}"'
    if any(op in (">=", ">", "==", "~=") and _release(raw)[0] >= 1 for op, raw in clauses):
        return None  # every version it admits is 1.0 or later
    kept = [f"{op}{raw}" for op, raw in clauses if op not in ("<", "<=")]  # upper bounds at or past 1.0
    return f'pip install "envhub{",".join([*kept, "<1"])}"'


def _caps_below_one(op: str, raw: str) -> bool:
    """Whether the clause ``op raw`` admits no version of 1.0 or later."""
    version = _release(raw[:-2] if raw.endswith(".*") else raw)
    if op == "<":
        return version <= (1,) + (0,) * (len(version) - 1)
    if op in ("<=", "=="):
        return version[0] == 0
    return op == "~=" and version[0] == 0 and len(version) >= 2


def core_requirement(dist: metadata.Distribution | None) -> str | None:
    """The unconditional ``envhub`` specifier a distribution requires (e.g. ``>=0.1.0,<0.2``), or None."""
    for requirement in (dist.requires if dist is not None else None) or []:
        match = _REQ.match(requirement)
        if match and normalize(match.group(1)) == "envhub" and not match.group(4):
            return match.group(3).strip()
    return None


def excludes_core(specifier: str, version: str = __version__) -> bool:
    """Whether ``specifier`` rules out ``version`` (release segments only; unknown clauses never exclude)."""
    have = _release(version)
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        match = _CLAUSE.match(clause)
        if match is None:
            continue
        op, raw = match.groups()
        if raw.endswith(".*"):
            prefix = _release(raw[:-2])
            same = have[: len(prefix)] == prefix
            if (op == "==" and not same) or (op == "!=" and same):
                return True
            continue
        want = _release(raw)
        width = max(len(have), len(want))
        a, b = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
        ok = {
            "==": a == b,
            "!=": a != b,
            "<=": a <= b,
            ">=": a >= b,
            "<": a < b,
            ">": a > b,
            "~=": a >= b and have[: len(want) - 1] == want[:-1],
        }[op]
        if not ok:
            return True
    return False


def compatible_core_range(version: str = __version__) -> str:
    """The envhub range of plugin API 1 from ``version`` on: ``>=0.1.0,<1`` (docs/compatibility.md).

    It follows the plugin API, not the core's minor version, and stays below 1.0: PyPI's unrelated
    ``envhub`` holds 1.0-1.4, and ``ENVHUB_API`` decides at run time.
    """
    return f">={version},<1"


def install_hint(prefix: str, origin: str, missing: str, dist: metadata.Distribution | None = None) -> str:
    """The pip line that installs what the backend ``prefix`` needs (the plugin's own requirement if it names one)."""
    top = missing.split(".")[0]
    for requirement in (dist.requires if dist is not None else None) or []:
        match = _REQ.match(requirement)
        if match and not match.group(4) and normalize(match.group(1)) == normalize(top):
            return f'pip install "{match.group(1)}{match.group(3).strip()}"'
    if _is_in_repo(prefix, origin):
        return plugin_install_line(prefix)
    return f"pip install {top}"


def missing_requirements(dist: metadata.Distribution | None) -> list[str]:
    """Unconditional requirements of ``dist`` that are not installed (metadata only)."""
    missing = []
    for requirement in (dist.requires if dist is not None else None) or []:
        match = _REQ.match(requirement)
        if match is None or match.group(4):
            continue  # extras and environment markers: not needed unconditionally
        try:
            metadata.distribution(match.group(1))
        except metadata.PackageNotFoundError:
            missing.append(match.group(1))
    return missing


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _is_in_repo(prefix: str, distribution: str) -> bool:
    return prefix in IN_REPO_BACKENDS and normalize(distribution) == f"envhub-{prefix}"


def _release(version: str) -> tuple[int, ...]:
    match = re.match(r"\d+(\.\d+)*", version.strip())
    return tuple(int(p) for p in match.group(0).split(".")) if match else (0,)


def missing_error(prefix: str, origin: str, entry_point: Any, exc: ModuleNotFoundError) -> EnvhubError:
    """The envhub error for a plugin whose import failed on a missing module: its own, or a dependency."""
    missing = exc.name or str(exc)
    if entry_point is not None and missing.split(".")[0] == entry_point.module.split(".")[0]:
        return PluginLoadError(prefix, origin, exc)  # the plugin module itself is gone
    dist = entry_point.dist if entry_point is not None else None
    return BackendNotInstalledError(prefix, missing, install_hint(prefix, origin, missing, dist))


def plugin_install_line(prefix: str) -> str:
    """The pip line that installs the first-party backend ``prefix`` (or the one it is closest to), else one naming them all."""
    name = prefix.lower()
    if name not in IN_REPO_BACKENDS:
        close = difflib.get_close_matches(name, IN_REPO_BACKENDS, n=1, cutoff=0.75)
        if not close:
            return (
                f'pip install "envhub[BACKEND]{compatible_core_range()}" with BACKEND one of '
                f"{', '.join(IN_REPO_BACKENDS)} (or a third-party plugin providing {prefix!r})"
            )
        name = close[0]
    return f'pip install "envhub[{name}]{compatible_core_range()}"'


__all__ = [
    "IN_REPO_BACKENDS",
    "PLUGIN_API",
    "SUPPORTED_APIS",
    "api_problem",
    "compatible_core_range",
    "core_install_line",
    "core_range_problem",
    "core_requirement",
    "declared_api",
    "declared_wrapper",
    "excludes_core",
    "install_hint",
    "missing_error",
    "missing_requirements",
    "normalize",
    "plugin_install_line",
]
