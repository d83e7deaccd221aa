"""playground's ids and what keeps some from running here, found without importing mujoco_playground.

Each suite module of mujoco_playground keeps its registry in a module-level dict ``_envs`` (what its
``ALL_ENVS`` and ``load`` read). Importing them imports MJX (tens of seconds on a small CPU), so the
listing reads the dict's keys from the source; once mujoco_playground is imported (by a ``make``, or by
the user, who may have registered envs of their own), the live registry is read instead.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

SUITES = ("dm_control_suite", "locomotion", "manipulation")
# The suites whose load() needs MuJoCo Menagerie's robot models (mjx_env.ensure_menagerie_exists).
NEEDS_MENAGERIE = ("locomotion", "manipulation")


def registered_envs() -> list[tuple[str, str]]:
    """``(name, suite)`` for every id of ``mujoco_playground.registry``, in the registry's order."""
    if "mujoco_playground" not in sys.modules:
        try:
            return [(name, suite) for suite in SUITES for name in _source_keys(_package() / "_src" / suite)]
        except (OSError, SyntaxError, ValueError):  # another layout: ask the registry itself
            pass
    from mujoco_playground import dm_control_suite, locomotion, manipulation

    modules = dict(zip(SUITES, (dm_control_suite, locomotion, manipulation)))
    return [(name, suite) for suite in SUITES for name in modules[suite].ALL_ENVS]


def unavailable_reason(suite: str) -> str | None:
    """Why ids of ``suite`` cannot run here, or None."""
    menagerie = menagerie_path()
    if suite in NEEDS_MENAGERIE and not menagerie.is_dir():
        return (
            f"it needs MuJoCo Menagerie's robot models, which mujoco_playground clones from github.com into {menagerie} "
            "on first load (envhub does not download); run once with network access: python -c "
            '"from mujoco_playground._src import mjx_env; mjx_env.ensure_menagerie_exists()"'
        )
    return None


def menagerie_path() -> Path:
    """Where mujoco_playground looks for the menagerie (``mjx_env.MENAGERIE_PATH``)."""
    return _package() / "external_deps" / "mujoco_menagerie"


def _package() -> Path:
    spec = importlib.util.find_spec("mujoco_playground")  # finds the package without running it
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'mujoco_playground'", name="mujoco_playground")
    return Path(next(iter(spec.submodule_search_locations)))


def _source_keys(suite: Path) -> list[str]:
    """The string keys of the module-level ``_envs = {...}`` in ``suite/__init__.py``."""
    tree = ast.parse((suite / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        value: ast.expr | None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "_envs" and isinstance(value, ast.Dict):
            keys = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if keys and len(keys) == len(value.keys):
                return keys
    raise ValueError(f"no `_envs = {{...}}` table of strings in {suite / '__init__.py'}")
