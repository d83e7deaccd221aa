"""The XLA flags the suite asks for, kept only where the installed jaxlib knows them (conftest.py).

jaxlib aborts the whole process on a flag it does not know (``Unknown flag in XLA_FLAGS``), and
pytest's capture hides the message: jaxlib 0.11 dropped ``--xla_cpu_use_fusion_emitters``, which
0.10 needs for cheap compiles. So each wanted flag is tried once in a small interpreter that starts
jax's CPU backend with it, and the answer is kept per jaxlib build (the cache file below), so a warm
run pays nothing. A jax that cannot start even without the suite's flags (a broken install, or an
unknown flag in the user's own ``XLA_FLAGS``) is reported on the terminal and the run stops.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

#: A program that starts jax's CPU backend, where XLA reads XLA_FLAGS.
_PROBE = "import jax; jax.numpy.zeros(1).block_until_ready()"


def _starts(flags: str) -> tuple[bool, str]:
    """Whether jax's CPU backend starts under ``XLA_FLAGS=flags``, and its last stderr line if not."""
    env = {**os.environ, "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"}
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True)
    if done.returncode == 0:
        return True, ""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return False, lines[-1] if lines else f"exit code {done.returncode}"


def _build_id() -> str:
    """What decides which flags jaxlib knows: its version and this interpreter."""
    return f"jaxlib {importlib.metadata.version('jaxlib')}, {sys.executable}"


def known_flags(wanted: list[str], base: str, cache_file: Path) -> tuple[list[str], list[str]]:
    """Split ``wanted`` into the flags the installed jaxlib accepts on top of ``base`` (the user's own
    XLA_FLAGS) and those it refuses; exit the run with the reason when jax cannot start at all."""
    key = hashlib.sha256(json.dumps([_build_id(), base, wanted]).encode()).hexdigest()[:16]
    try:
        known = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        known = {}
    if key in known:
        kept = known[key]
        return kept, [flag for flag in wanted if flag not in kept]
    ok, why = _starts(" ".join([base, *wanted]).strip())
    if ok:
        kept = list(wanted)
    else:
        ok, why_base = _starts(base)
        if not ok:
            raise SystemExit(
                f"envhub's tests cannot start: jax's CPU backend fails with XLA_FLAGS={base!r}: {why_base} "
                "(fix or unset XLA_FLAGS, or reinstall jax and jaxlib)"
            )
        kept = [flag for flag in wanted if _starts(f"{base} {flag}".strip())[0]]
    known[key] = kept
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        cache_file.write_text(json.dumps(known, indent=1))
    except OSError:
        pass  # a read-only home: probe again next run
    return kept, [flag for flag in wanted if flag not in kept]
