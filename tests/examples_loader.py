"""Load a script of examples/ as a module, for the example tests (the examples are scripts, not a package)."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@functools.cache
def load_example(name: str):
    """``examples/<name>.py`` as the module ``envhub_example_<name>`` (registered in ``sys.modules``, where
    dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(f"envhub_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def short_run(name: str, args: list[str], out: Path) -> dict:
    """Run ``examples/<name>.py``'s ``main(args + --out out)``; check it saved what it returned and drew its curve;
    return the saved metrics."""
    metrics = load_example(name).main([*args, "--out", str(out)])
    saved = json.loads((out / "metrics.json").read_text())
    assert saved == json.loads(json.dumps(metrics)) and (out / "curve.png").stat().st_size > 0
    return saved
