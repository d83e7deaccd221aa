"""The import graph of envhub and of each in-repo plugin (docs/architecture.md): no circle, every arrow
down the layers, no ``_name`` taken from another module. Imports under ``TYPE_CHECKING`` and inside
functions count: they are arrows a reader has to follow too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: envhub's layers, ground first: a module imports only from its own layer or one below.
LAYERS = [
    ("envhub.errors", "envhub.version"),
    ("envhub.spaces",),
    ("envhub.core",),
    ("envhub.native", "envhub.host"),
    ("envhub.wrappers",),
    ("envhub.registry",),
    ("envhub.tools",),
    ("envhub.interop",),
    ("envhub",),  # the user's surface, envhub/__init__.py
    ("envhub.testing",),
    ("envhub.plugin",),
    ("envhub.cli", "envhub.__main__"),
]


def layer(module: str) -> int:
    """The index in LAYERS of the longest prefix naming ``module``'s package."""
    best = max(
        (prefix for group in LAYERS for prefix in group if module == prefix or module.startswith(prefix + ".")),
        key=len,
    )
    return next(i for i, group in enumerate(LAYERS) if best in group)


def modules_under(source_root: Path, package: str) -> dict[str, Path]:
    """Dotted name -> file of every module of ``package`` under ``source_root``."""
    found = {}
    for path in sorted((source_root / package).rglob("*.py")):
        parts = path.relative_to(source_root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, str, int]]:
    """(imported module, imported name or "", line) of every import in the file, at any depth."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(alias.name, "", node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append((sub, "", node.lineno) if sub in modules else (base, alias.name, node.lineno))
    return [(target, what, line) for target, what, line in out if target in modules and target != name]


def graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    return {name: {target for target, _, _ in imports(name, path, modules)} for name, path in modules.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


CORE = modules_under(ROOT, "envhub")
PLUGIN_SOURCES = sorted(p for p in ROOT.glob("plugins/envhub-*/src/envhub_*") if p.is_dir())


def test_the_core_has_no_circle():
    assert len(CORE) > 50
    assert circles(graph(CORE)) == []


@pytest.mark.parametrize("source", PLUGIN_SOURCES, ids=lambda p: p.name)
def test_a_plugin_has_no_circle(source):
    modules = modules_under(source.parent, source.name)
    assert circles(graph(modules)) == []


def test_every_arrow_of_the_core_points_down_the_layers():
    upward = [
        f"{name} ({LAYERS[layer(name)][0]}) imports {target} ({LAYERS[layer(target)][0]})"
        for name, targets in graph(CORE).items()
        for target in targets
        if layer(target) > layer(name)
    ]
    assert upward == []


def test_no_private_name_is_taken_from_another_module():
    taken = [
        f"{CORE[name].relative_to(ROOT)}:{line} takes {what} from {target}"
        for name, path in CORE.items()
        for target, what, line in imports(name, path, CORE)
        if what.startswith("_") and not what.startswith("__") or any(p.startswith("_") for p in target.split("."))
    ]
    assert taken == []


def test_the_checks_find_what_they_look_for():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c"]]
    assert layer("envhub.core.env") < layer("envhub.registry.hub") < layer("envhub.cli.cmd_list")
    assert layer("envhub") == LAYERS.index(("envhub",))
