"""Plugin API 1 is one module: plugins import envhub only as ``envhub``, ``envhub.plugin``, ``envhub.testing``.

Every ``.py`` under ``plugins/`` (first-party plugins and the template, sources and tests) is parsed;
any other ``envhub.*`` import (or attribute reached from ``envhub``) fails, named by file and line. Tests may also use the user's public
``envhub.wrappers`` and ``envhub.interop``. Every name of ``envhub.plugin.__all__`` exists, is a
re-export (the module holds no logic), has a docstring where it is a class, function or module, and
is named in CONTRIBUTING.md's plugin-author section.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import pytest

import envhub
import envhub.plugin

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_MODULES = {"envhub", "envhub.plugin", "envhub.testing"}
USER_MODULES = {"envhub.wrappers", "envhub.interop"}  # public modules of the user's; tests may use them


def _allowed(module: str, in_tests: bool) -> bool:
    allowed = PLUGIN_MODULES | (USER_MODULES if in_tests else set())
    return any(module == m or (m != "envhub" and module.startswith(m + ".")) for m in allowed)


def envhub_import_problems(path: Path, in_tests: bool) -> list[str]:
    """``file:line: what`` for each import of envhub other than the plugin surface in one file."""
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    problems = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (  # `envhub.core.kwargs.infer_type(...)`: reaching past the surface by attribute, not import
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "envhub"
            and node.attr not in envhub.__all__
            and not _allowed(f"envhub.{node.attr}", in_tests)
        ):
            problems.append(f"{where}:{node.lineno}: imports envhub.{node.attr} (use envhub.plugin)")
            continue
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            if node.module == "envhub":  # `from envhub import x`: a public name of envhub's, or its module x
                modules = ["envhub" if a.name in envhub.__all__ else f"envhub.{a.name}" for a in node.names]
        else:
            continue
        for module in modules:
            if (module == "envhub" or module.startswith("envhub.")) and not _allowed(module, in_tests):
                problems.append(f"{where}:{node.lineno}: imports {module} (use envhub.plugin)")
    return problems


def _plugin_files() -> list[Path]:
    return sorted(p for p in (ROOT / "plugins").rglob("*.py") if ".venv" not in p.parts and "build" not in p.parts)


def test_plugins_import_envhub_only_through_the_plugin_surface():
    files = _plugin_files()
    assert len(files) > 30 and any("_template" in p.parts for p in files)
    problems = [problem for path in files for problem in envhub_import_problems(path, in_tests="tests" in path.parts)]
    assert not problems, "imports outside envhub, envhub.plugin and envhub.testing:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "in_tests", "found"),
    [
        ("from envhub.native.environment import JaxStep\n", False, ["2:imports envhub.native.environment"]),
        ("import envhub.errors\n", False, ["2:imports envhub.errors"]),
        ("from envhub import host_callback\n", False, ["2:imports envhub.host_callback"]),
        (
            "import os\n\ndef f():\n    from envhub.tools.render import record\n",
            False,
            ["5:imports envhub.tools.render"],
        ),
        ("from envhub.wrappers import select\n", False, ["2:imports envhub.wrappers"]),
        ("from envhub.wrappers import select\n", True, []),
        ("import envhub\nfrom envhub import spaces, testing\nfrom envhub.plugin import JaxStep\n", False, []),
        ("from envhub.testing.toy_envs import Corridor\nfrom . import envhub_x\n", True, []),
        ("import envhub\nx = envhub.core.kwargs.infer_type(1)\n", False, ["3:imports envhub.core"]),
        ("import envhub\nimport envhub.plugin\nx = envhub.plugin.infer_type(envhub.make)\n", False, []),
    ],
)
def test_the_import_check_names_file_and_line(tmp_path, source, in_tests, found):
    path = tmp_path / "mod.py"
    path.write_text("# a plugin module\n" + source)
    problems = envhub_import_problems(path, in_tests)
    assert [re.sub(r"^.*mod\.py:(\d+): (imports \S+).*$", r"\1:\2", p) for p in problems] == found


def test_plugin_surface_names_exist_are_reexports_and_documented():
    names = envhub.plugin.__all__
    assert len(names) == len(set(names)), "a name twice in envhub.plugin.__all__"
    missing = [name for name in names if not hasattr(envhub.plugin, name)]
    assert not missing, f"envhub.plugin.__all__ names what it does not hold: {missing}"
    own = [
        name
        for name in names
        if (inspect.isclass(obj := getattr(envhub.plugin, name)) or inspect.isfunction(obj))
        and obj.__module__ == "envhub.plugin"
    ]
    assert not own, f"envhub.plugin re-exports only; defined there: {own}"
    undocumented = [
        name
        for name in names
        if (inspect.isclass(obj := getattr(envhub.plugin, name)) or callable(obj) or inspect.ismodule(obj))
        and not (inspect.getdoc(obj) or "").strip()
    ]
    assert not undocumented, f"no docstring: {undocumented}"
    text = (ROOT / "CONTRIBUTING.md").read_text()
    section = text[text.index("[start:plugin-api]") : text.index("[end:plugin-api]")]
    assert "`envhub.plugin`" in section
    unnamed = [name for name in names if f"`{name}`" not in section]
    assert not unnamed, f"CONTRIBUTING.md's plugin author's API does not name: {unnamed}"


def test_public_plugin_names_are_the_same_objects_as_envhubs():
    shared = [n for n in envhub.plugin.__all__ if n in envhub.__all__]
    assert {"JaxEnvironment", "HostEnvironment", "JaxStep", "HostStep", "hookimpl", "PLUGIN_API"} <= set(shared)
    assert all(getattr(envhub.plugin, n) is getattr(envhub, n) for n in shared)


@pytest.mark.parametrize("record", [envhub.plugin.JaxStep, envhub.plugin.HostStep])
def test_step_records_take_keywords_only(record):
    fields = [f.name for f in dataclasses.fields(record)]
    spelled = re.escape(f"{record.__name__}({', '.join(f'{f}=...' for f in fields)})")
    with pytest.raises(TypeError, match=rf"{record.__name__} takes keyword arguments only.*{spelled}"):
        record(*range(len(fields)))
    with pytest.raises(TypeError, match="keyword arguments only"):
        record(0, **{f: 0 for f in fields[1:]})
    step = record(**{f: i for i, f in enumerate(fields)})
    assert [getattr(step, f) for f in fields] == list(range(len(fields)))
