"""Import envpool whatever the installed jax: a stub replaces a broken ``envpool/python/xla_template.py``.

Old envpool releases build their XLA interface with jax internals that newer jax removed, so
``import envpool`` fails inside ``envpool/python/xla_template.py``. envpool only needs that module
for ``env.xla()``; the shim puts a stub under its name in ``sys.modules`` (site-packages is never
touched), imports envpool again, and records that the XLA path is unavailable, so envhub uses the
host bridge for every environment.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
import types
from pathlib import Path
from typing import Any

TEMPLATE = "envpool.python.xla_template"

#: How envpool was imported in this process: None (not yet), "xla" or the reason XLA is unavailable.
_status: dict[str, Any] = {"imported": False, "xla": None, "reason": ""}


def _stub(reason: str) -> types.ModuleType:
    module = types.ModuleType(TEMPLATE, "envhub stub for envpool's XLA template (it failed to import)")

    def make_xla(obj: Any) -> Any:
        raise RuntimeError(
            f"envpool's XLA interface is unavailable with this jax ({reason}); envhub uses its host bridge."
        )

    module.make_xla = make_xla  # type: ignore[attr-defined]
    module.__envhub_stub__ = True  # type: ignore[attr-defined]
    return module


def _forget_envpool() -> None:
    for name in [m for m in sys.modules if m == "envpool" or m.startswith("envpool.")]:
        del sys.modules[name]


def import_envpool() -> Any:
    """Import and return envpool, installing the XLA-template stub if the real one breaks."""
    if _status["imported"]:
        return sys.modules["envpool"]
    try:
        envpool = importlib.import_module("envpool")
        stubbed = getattr(sys.modules.get(TEMPLATE), "__envhub_stub__", False)
        _status.update(imported=True, xla=not stubbed, reason="" if not stubbed else "stubbed before import")
        return envpool
    except Exception as exc:  # noqa: BLE001 - only a failure inside the XLA template is ours to fix
        frames = [f.filename for f in traceback.extract_tb(exc.__traceback__)]
        if not any(Path(f).name == "xla_template.py" for f in frames) and TEMPLATE not in str(exc):
            raise
        reason = f"{type(exc).__name__}: {exc}"
    _forget_envpool()
    sys.modules[TEMPLATE] = _stub(reason)
    envpool = importlib.import_module("envpool")
    _status.update(imported=True, xla=False, reason=reason)
    return envpool


def xla_available() -> bool:
    """Whether envpool's XLA interface works here (imports envpool)."""
    import_envpool()
    lax = sys.modules.get("envpool.python.lax")  # envpool >= 1.2.5 skips it itself when it cannot import
    return bool(_status["xla"]) and lax is not None and hasattr(lax, "XlaMixin")


def predicted_status() -> str:
    """The XLA-path status for ``envhub list``, without importing envpool (reads its files only)."""
    if _status["imported"]:
        return (
            ""
            if _status["xla"]
            else f"envpool's XLA path is unavailable ({_status['reason']}); the host bridge is used"
        )
    spec = importlib.util.find_spec("envpool")
    if spec is None or not spec.submodule_search_locations:
        return ""
    template = Path(next(iter(spec.submodule_search_locations))) / "python" / "xla_template.py"
    try:
        source = template.read_text()
    except OSError:
        return ""
    if "ffi" in source:
        return ""
    return (
        "this envpool's XLA template predates jax.ffi: envhub stubs it at import, "
        "so envpool's XLA path is unavailable and every env uses the host bridge (install envpool>=1.2.5 for the fast path)"
    )
