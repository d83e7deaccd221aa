"""Load a script of the repository (examples/, scripts/, docs hooks: scripts, not a package) as a module, for its tests."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load_file(path: Path, name: str):
    """The file ``path`` run as the module ``name`` (registered in ``sys.modules``, where dataclasses look
    their module up)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@functools.cache
def load_example(name: str):
    """``examples/<name>.py`` as the module ``envhub_example_<name>``."""
    return load_file(EXAMPLES / f"{name}.py", f"envhub_example_{name}")


def short_run(name: str, args: list[str], out: Path) -> dict:
    """Run ``examples/<name>.py``'s ``main(args + --out out)``; check it saved what it returned and drew its curve;
    return the saved metrics."""
    metrics = load_example(name).main([*args, "--out", str(out)])
    saved = json.loads((out / "metrics.json").read_text())
    assert saved == json.loads(json.dumps(metrics)) and (out / "curve.png").stat().st_size > 0
    return saved
