"""`import envhub` and `envhub list` must not import any backend library."""

import json
import subprocess
import sys

from envhub.registry.plugin_api import IN_REPO_BACKENDS as IN_REPO  # tests/test_packaging.py checks it

BACKENDS = (
    "gymnax",
    "gymnasium",
    "envpool",
    "brax",
    "jumanji",
    "craftax",
    "xminigrid",
    "mujoco_playground",
    "mujoco",
    "flax",
    "ale_py",
    "pgx",
    "pgx_minatar",
    "jaxmarl",
    "jaxtari",
)

#: What gymnax's top level imports for its drawings (seaborn pulls scipy): no gymnax env needs it to run.
DRAWING = ("matplotlib", "seaborn", "scipy")

PROBE = """
import json, os, sys
def report():  # one line of JSON: what is imported now
    print(json.dumps({{"backends": [m for m in {backends!r} if m in sys.modules],
                       "plugins": sorted(m for m in sys.modules if m.startswith("envhub_")),
                       "drawing": [m for m in {drawing!r} if m in sys.modules]}}), flush=True)
{body}
report()
os._exit(0)  # skip the interpreter's teardown (jax's and the backends' frees: seconds)
"""


def _probes(body: str) -> list[dict]:
    """What ``body`` has imported when it calls ``report()``, and at its end, in a fresh interpreter."""
    code = PROBE.format(body=body, backends=BACKENDS, drawing=DRAWING)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith('{"backends"')]


def _probe(body: str) -> dict:
    return _probes(body)[-1]


def test_import_envhub_imports_no_backend():
    assert _probe("import envhub")["backends"] == []


def test_envhub_list_check_loads_plugins_but_no_backend_and_gymnax_envs_make_without_its_drawings():
    rows = __import__("envhub").list_backends()
    installed, gymnax = [b.prefix for b in rows], any(b.prefix == "gymnax" and b.status == "ok" for b in rows)
    made = "import envhub\nenvhub.make('gymnax/CartPole-v1')\n"  # `import gymnax` then: the plugin's tests
    listed, *after = _probes("from envhub.cli import main\nmain(['list', '--check'])\nreport()\n" + made * gymnax)
    assert listed["backends"] == []
    # Each installed plugin module was imported (to report its status), its backend was not (plain
    # `envhub list` imports neither: tests/test_cli_list.py).
    assert all(f"envhub_{p}" in listed["plugins"] for p in installed if p in IN_REPO)
    if gymnax:  # the gymnax modules CartPole needs, not gymnax's top level (13 s on a loaded machine)
        assert after[0]["drawing"] == [] and "gymnax" in after[0]["backends"], after[0]


def _module_imports():
    """The imports of every core module, lazy ones inside functions included (``TYPE_CHECKING`` blocks excluded)."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1] / "envhub"
    graph = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        targets = set()
        tree = ast.parse(path.read_text())
        skipped = {
            id(n)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.dump(block.test)
            for n in ast.walk(block)
        }
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                targets |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        graph[name] = targets
    return graph


def test_core_imports_no_plugin_and_has_no_cycle():
    graph = _module_imports()
    assert len(graph) > 20
    plugins = {m: sorted(t for t in ts if t.split(".")[0].startswith("envhub_")) for m, ts in graph.items()}
    assert not any(plugins.values()), plugins
    edges = {m: {t for t in ts if t in graph and t != m and not m.startswith(t + ".")} for m, ts in graph.items()}
    visiting, done = set(), set()

    def visit(m, path):
        assert m not in visiting, f"import cycle: {' -> '.join([*path, m])}"
        if m in done:
            return
        visiting.add(m)
        for t in edges[m]:
            visit(t, [*path, m])
        visiting.discard(m)
        done.add(m)

    for m in graph:
        visit(m, [])
