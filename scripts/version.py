#!/usr/bin/env python3
"""One version for envhub and its in-repo plugins, set in one place: the root pyproject.toml.

    python scripts/version.py          check that every file agrees with it (exit 1 if not)
    python scripts/version.py 0.2.0    set 0.2.0 everywhere: the core, envhub/version.py, every plugin
                                       (and the template), each plugin's envhub range, the core's extras

Every other file is stamped from the root version, so metadata stays static (readable by any tool,
and every sdist is self-contained). Two ranges (docs/compatibility.md): each plugin requires
envhub>=X.Y.Z,<1, the range of plugin API 1, so a later core minor keeps every plugin installable
(ENVHUB_API decides at run time); the core's extras pick the plugins of their own release,
envhub-NAME>=X.Y.Z,<X.(Y+1). Versions stay below 1.0, because an unrelated project named "envhub"
holds 1.0-1.4 on PyPI.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = sorted(p for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())
_VERSION = re.compile(r'^version = "([^"]+)"$', re.M)
_PLUGIN_REQ = re.compile(
    r'"(envhub-(?:gymnax|gymnasium|envpool|brax|jumanji|craftax|xminigrid|playground|pgx|jaxmarl|ale|jaxatari|octax|factoriax))[^";]*'
)  # an environment marker after the range (`; python_version >= '3.11'`) is kept
_CORE_REQ = re.compile(r'"envhub(>=[^"]*)"')


def root_version() -> str:
    match = _VERSION.search((ROOT / "pyproject.toml").read_text())
    assert match, "no version in pyproject.toml"
    return match.group(1)


def core_range(version: str) -> str:
    """The envhub range every plugin requires: plugin API 1's, ``>=X.Y.Z,<1``."""
    major = int(version.split(".")[0])
    if major != 0:
        raise SystemExit(f"version {version!r} must stay below 1.0: PyPI's unrelated 'envhub' holds 1.0-1.4")
    return f">={version},<1"


def plugin_range(version: str) -> str:
    """The range the core's extras name their plugins by: this release's minor, ``>=X.Y.Z,<0.(Y+1)``."""
    core_range(version)  # the same refusal of 1.x
    return f">={version},<0.{int(version.split('.')[1]) + 1}"


def stamped(version: str) -> dict[Path, str]:
    """Every stamped file's text as it must be for ``version``."""
    rng, extras = core_range(version), plugin_range(version)
    out = {}
    root = (ROOT / "pyproject.toml").read_text()
    out[ROOT / "pyproject.toml"] = _PLUGIN_REQ.sub(
        lambda m: f'"{m.group(1)}{extras}', _VERSION.sub(f'version = "{version}"', root, 1)
    )
    out[ROOT / "envhub" / "version.py"] = re.sub(
        r'__version__ = "[^"]*"', f'__version__ = "{version}"', (ROOT / "envhub" / "version.py").read_text()
    )
    for plugin in PLUGINS:
        text = (plugin / "pyproject.toml").read_text()
        text = _VERSION.sub(f'version = "{version}"', text, 1)
        out[plugin / "pyproject.toml"] = _CORE_REQ.sub(f'"envhub{rng}"', text)
    return out


def problems() -> list[str]:
    """The files that disagree with the root version (empty when all agree)."""
    return [str(p.relative_to(ROOT)) for p, text in stamped(root_version()).items() if p.read_text() != text]


def main(argv: list[str]) -> int:
    if argv:
        if not re.fullmatch(r"\d+\.\d+\.\d+", argv[0]):
            raise SystemExit(f"version {argv[0]!r} must look like 0.2.0")
        root = ROOT / "pyproject.toml"
        root.write_text(_VERSION.sub(f'version = "{argv[0]}"', root.read_text(), 1))
        for path, text in stamped(argv[0]).items():
            path.write_text(text)
    bad = problems()
    if bad:
        print(f"not at version {root_version()} (run python scripts/version.py {root_version()}): {', '.join(bad)}")
        return 1
    v = root_version()
    print(f"{v}: core, {len(PLUGINS)} plugins; plugins require envhub{core_range(v)}, extras envhub-*{plugin_range(v)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
