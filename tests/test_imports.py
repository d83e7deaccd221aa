"""`import envhub` and `envhub list` must not import any backend library."""

import json
import subprocess
import sys

BACKENDS = ("gymnax", "gymnasium", "envpool", "brax", "mujoco", "flax", "ale_py")

PROBE = """
import json, sys
{body}
print(json.dumps({{"backends": [m for m in {backends!r} if m in sys.modules],
                   "plugins": sorted(m for m in sys.modules if m.startswith("envhub_"))}}))
"""


def _probe(body: str) -> dict:
    code = PROBE.format(body=body, backends=BACKENDS)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(run.stdout.splitlines()[-1])


def test_import_envhub_imports_no_backend():
    assert _probe("import envhub")["backends"] == []


def test_envhub_list_loads_plugins_but_no_backend():
    result = _probe("from envhub.cli import main\nmain(['list'])")
    assert result["backends"] == []
    installed = [b.prefix for b in __import__("envhub").list_backends()]
    # Each installed plugin module was imported (to report its status), its backend was not.
    assert all(f"envhub_{p}" in result["plugins"] for p in installed if p in ("gymnax", "gymnasium", "envpool", "brax"))
