"""Plain ``envhub list`` reads installed metadata only: no plugin, no backend library, no jax imported."""

import os
import subprocess
import sys
from pathlib import Path

from fake_dists import write_dist

from envhub.registry.discovery import installed_backends

HEAVY = ("jax", "gymnax", "brax", "ale_py", "gymnasium", "jumanji", "pgx", "envpool", "mujoco", "jaxmarl", "jaxtari")
PROBE = (
    "import sys; from envhub.cli import main; code = main({argv!r}); "
    "print(code, sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r} or m.startswith('envhub_')))"
)


def _imports_after(argv: list[str]) -> str:
    code = PROBE.format(argv=argv, heavy=set(HEAVY))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return run.stdout.splitlines()[-1]


def test_envhub_list_imports_no_plugin_no_backend_and_no_jax():
    assert _imports_after(["list"]) == "0 []"
    assert _imports_after(["list", "--json"]) == "0 []"


#: A plugin module that exits when imported: a status read from metadata never runs it.
EXITS = 'ENVHUB_API = 1\nraise SystemExit("the plugin module was imported")\n'


def test_statuses_come_from_metadata_without_importing(site, monkeypatch):
    write_dist(site, "fake-plugin-meta", {"fakemeta": "fake_plugin_meta"}, {"fake_plugin_meta": EXITS})
    write_dist(site, "fake-plugin-old", {"fakeold": "fake_plugin_old"}, {"fake_plugin_old": "ENVHUB_API: int = 0\n"})
    write_dist(site, "fake-plugin-str", {"fakestr": "fake_plugin_str"}, {"fake_plugin_str": 'ENVHUB_API = "1"\n'})
    write_dist(site, "fake-plugin-req", {"fakereq": "fake_plugin_req"}, {"fake_plugin_req": ""}, ("nolib-xyz>=2",))
    write_dist(site, "fake-plugin-gone", {"fakegone": "fake_plugin_nowhere"})
    write_dist(site, "fake-plugin-syn", {"fakesyn": "fake_plugin_syn"}, {"fake_plugin_syn": "def (:\n"})
    write_dist(site, "fake-plugin-new", {"fakenew": "fake_plugin_new"}, {"fake_plugin_new": ""}, ("envhub>=0.9,<1",))
    monkeypatch.setenv("ENVHUB_PLUGINS", "fakemeta,fakeold,fakestr,fakereq,fakegone,fakesyn,fakenew")
    rows = {row.prefix: row for row in installed_backends()}
    assert list(rows) == sorted(rows)
    assert (rows["fakeold"].status, rows["fakeold"].api) == ("error", 0) and "plugin API 0" in rows["fakeold"].reason
    assert rows["fakestr"].status == "error" and "ENVHUB_API = '1' (str)" in rows["fakestr"].reason
    assert rows["fakereq"].status == "missing" and 'not installed: nolib-xyz; pip install "nolib-xyz>=2"' in (
        rows["fakereq"].reason
    )
    assert rows["fakegone"].status == "error" and "No module named 'fake_plugin_nowhere'" in rows["fakegone"].reason
    assert rows["fakesyn"].status == "error" and "SyntaxError" in rows["fakesyn"].reason
    assert rows["fakenew"].status == "error" and "requires envhub>=0.9,<1" in rows["fakenew"].reason
    assert (rows["fakemeta"].status, rows["fakemeta"].api) == ("ok", 1)  # its import would exit: never run
    write_dist(site, "fake-plugin-dup", {"fakemeta": "fake_plugin_dup"})
    (row,) = [r for r in installed_backends() if r.prefix == "fakemeta"]
    assert row.status == "error" and "claimed by both" in row.reason  # two distributions, one prefix
    assert not [m for m in sys.modules if m.startswith("fake_plugin")]


def test_check_imports_the_plugins_to_find_what_metadata_cannot(site):
    write_dist(site, "fake-plugin-meta", {"fakemeta": "fake_plugin_meta"}, {"fake_plugin_meta": EXITS})
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ENVHUB_")}
    tests = str(Path(__file__).resolve().parent)
    environ.update(PYTHONPATH=os.pathsep.join([str(site), tests]), ENVHUB_PLUGINS="fakemeta")
    plain, checked = (
        subprocess.run([sys.executable, "-m", "envhub", "list", *flags], capture_output=True, text=True, env=environ)
        for flags in ([], ["--check"])
    )
    row = ["fakemeta", "fake-plugin-meta", "1.0", "1", "ok"]
    assert plain.returncode == 0 and plain.stdout.splitlines()[1].split() == row
    assert checked.returncode == 0 and checked.stdout.splitlines()[1].split()[-1] == "error"
    assert "SystemExit: the plugin module was imported" in checked.stdout
