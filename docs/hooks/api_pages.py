"""mkdocs hook: one API reference page per public envhub module, generated at build time.

A module is public when no part of its dotted name starts with ``_``; its public names are its
``__all__``. A package (``envhub``, ``envhub.wrappers``, ...) mostly re-exports, and so does a module
that defines none of the classes and functions it exports (``envhub.plugin``): the page of such an
*index* is its docstring and a table linking each name to the module that documents it; every other
module is rendered in full by mkdocstrings. A module added later gets its page with no edit here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = "envhub"
SECTION = "API reference"


def public_modules() -> list[str]:
    """Every public module of envhub (dotted names), the root package first."""
    root = importlib.import_module(ROOT)
    names = [ROOT]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{ROOT}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def optional_dependency_missing(module: str) -> str | None:
    """Why ``module`` cannot be imported here (an extra it needs is not installed), or None."""
    from envhub.errors import MissingDependencyError

    try:
        importlib.import_module(module)
    except MissingDependencyError as exc:
        return str(exc)
    return None


def page_path(module: str) -> str:
    return f"reference/{module}.md"


def _is_package(module: ModuleType) -> bool:
    return hasattr(module, "__path__")


def is_index(module: ModuleType) -> bool:
    """A package, or a module that only re-exports: no class or function of its ``__all__`` is its own."""
    if _is_package(module):
        return True
    exported = [getattr(module, name) for name in getattr(module, "__all__", ())]
    defined = [obj for obj in exported if inspect.isclass(obj) or inspect.isfunction(obj)]
    return bool(exported) and all(obj.__module__ != module.__name__ for obj in defined)


def _home(name: str, obj: Any, modules: list[str]) -> str | None:
    """The documented identifier of ``obj`` (exported as ``name``): where a non-package module renders it."""
    if inspect.ismodule(obj):
        return obj.__name__ if obj.__name__ in modules else None
    importable = [m for m in modules if optional_dependency_missing(m) is None]
    candidates = [m for m in importable if not is_index(importlib.import_module(m))]
    defined_in = getattr(obj, "__module__", None) if inspect.isclass(obj) or inspect.isfunction(obj) else None
    if defined_in in candidates and name in getattr(importlib.import_module(defined_in), "__all__", ()):
        return f"{defined_in}.{name}"
    for module in candidates:
        mod = importlib.import_module(module)
        if name in getattr(mod, "__all__", ()) and getattr(mod, name, None) is obj:
            return f"{module}.{name}"
    return None


def _summary(obj: Any) -> str:
    doc = inspect.getdoc(obj) if (inspect.ismodule(obj) or inspect.isclass(obj) or callable(obj)) else None
    line = (doc or "").strip().splitlines()[0] if doc else ""
    return line.replace("|", "\\|")


def page_markdown(module: str, modules: list[str]) -> str:
    """The Markdown of ``module``'s reference page (a note instead, when an extra it needs is missing)."""
    missing = optional_dependency_missing(module)
    if missing is not None:
        return f"# {module}\n\nNot rendered in this build: {missing}\n"
    mod = importlib.import_module(module)
    if not is_index(mod):
        return f"::: {module}\n"
    if not hasattr(mod, "__all__"):  # a concept package (envhub.core, envhub.host, ...): its docstring and its modules
        inside = [m for m in modules if m.rpartition(".")[0] == module]
        return (
            "\n".join(
                [f"::: {module}", "    options:", "      members: false", "", "| module | what |", "|---|---|"]
                + [f"| [`{m}`][{m}] | {_summary(importlib.import_module(m))} |" for m in inside]
            )
            + "\n"
        )
    lines = [
        f"::: {module}",
        "    options:",
        "      members: false",
        "",
        f"`{module}` exports these names (its `__all__`); each links to the module that documents it.",
        "",
        "| name | what |",
        "|---|---|",
    ]
    for name in mod.__all__:
        obj = getattr(mod, name)
        home = _home(name, obj, modules)
        label = f"[`{name}`][{home}]" if home else f"`{name}`"
        what = _summary(obj) if inspect.ismodule(obj) or callable(obj) else f"`{obj!r}`"
        lines.append(f"| {label} | {what} |")
    return "\n".join(lines) + "\n"


def on_config(config: Any) -> Any:
    pages = [{module: page_path(module)} for module in public_modules()]
    for entry in config["nav"]:
        if isinstance(entry, dict) and SECTION in entry:
            entry[SECTION] = pages
    return config


def on_files(files: Files, config: Any) -> Files:
    modules = public_modules()
    for module in modules:
        files.append(File.generated(config, page_path(module), content=page_markdown(module, modules)))
    return files
