"""Write installed-looking distributions (dist-info + modules) into a directory on sys.path.

importlib.metadata finds them exactly as it finds pip-installed plugins, so these tests exercise
real entry-point discovery without running pip.
"""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_dist(
    root: Path,
    name: str,
    entry_points: dict[str, str],
    modules: dict[str, str] | None = None,
    requires: tuple[str, ...] = (),
    version: str = "1.0",
) -> None:
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"] + [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(meta) + "\n")
    lines = ["[envhub.backends]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for module, source in (modules or {}).items():
        (root / f"{module}.py").write_text(textwrap.dedent(source))


TOY_PLUGIN = """
import envhub
from envhub.testing.toy_envs import Corridor

@envhub.hookimpl
def envhub_register_envs(register):
    register("Corridor-v0", Corridor)
"""

BROKEN_PLUGIN = """
raise RuntimeError("boom at import")
"""

MISSING_BACKEND_PLUGIN = """
import envhub

@envhub.hookimpl
def envhub_register_envs(register):
    import not_a_real_backend_lib  # the backend library is not installed
"""
