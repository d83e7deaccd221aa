#!/usr/bin/env python3
"""Build the envhub release (the core and the fourteen in-repo plugins) as sdist + wheel, then check them.

    python scripts/build_release.py [--out dist]

Each wheel is built from its sdist (``uv build``), so a self-contained sdist is part of the check.
Then: ``twine check --strict`` on all thirty files (fifteen projects, two files each), one shared
version, no direct reference (``name @ url``) in any Requires-Dist. Needs the ``test`` (or ``dev``)
extra: uv and twine. The copy-me template (``plugins/_template``, ``envhub-mybackend``) is not part
of the release, so ``twine upload dist/*`` never publishes it; tests/test_template_plugin.py tests it.
Upload the folder to the project's own index with ``twine upload dist/*``, or install from it with
``--find-links`` (docs/install.md).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The released projects: the core and every plugin under plugins/ but the template (``_`` names are not released).
PROJECTS = [ROOT] + sorted(
    p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file() and not p.name.startswith("_")
)


def build(project: Path, out: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "uv", "build", "--quiet", "--out-dir", str(out), str(project)],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        raise SystemExit(f"building {project.relative_to(ROOT.parent)} failed:\n{run.stderr[-3000:]}")


def metadata_of(path: Path) -> str:
    """The core metadata of a wheel (METADATA) or sdist (PKG-INFO)."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as whl:
            name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
            return whl.read(name).decode()
    with tarfile.open(path) as sdist:
        member = next(m for m in sdist.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO"))
        file = sdist.extractfile(member)
        assert file is not None
        return file.read().decode()


def verify(files: list[Path]) -> list[str]:
    """Problems in the built metadata: mixed versions, direct references."""
    problems, versions = [], {}
    for path in files:
        meta = metadata_of(path)
        versions[path.name] = re.search(r"^Version: (.+)$", meta, re.M).group(1)  # type: ignore[union-attr]
        for req in re.findall(r"^Requires-Dist: (.+)$", meta, re.M):
            if re.match(r"[A-Za-z0-9._-]+(\[[^\]]*\])?\s*@", req):
                problems.append(f"{path.name}: direct reference {req!r}")
    if len(set(versions.values())) != 1:
        problems.append(f"versions differ: {versions}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="output folder (emptied first; default dist/)")
    out = parser.parse_args().out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(lambda p: build(p, out), PROJECTS))
    files = sorted(out.glob("*.whl")) + sorted(out.glob("*.tar.gz"))
    built = time.perf_counter() - start
    if len(files) != 2 * len(PROJECTS):
        raise SystemExit(f"expected {2 * len(PROJECTS)} files in {out}, found {[f.name for f in files]}")
    problems = verify(files)
    check = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, files)], capture_output=True, text=True
    )
    if check.returncode != 0:
        problems.append(f"twine check --strict failed:\n{check.stdout}{check.stderr}")
    for problem in problems:
        print(f"build_release: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(
        f"{len(files)} distributions in {out} (built in {built:.1f} s, checked in {time.perf_counter() - start - built:.1f} s):"
    )
    for f in files:
        print(f"  {f.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
