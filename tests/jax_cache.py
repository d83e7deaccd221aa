"""The suite's JAX compilation cache stays under a size (conftest.py calls ``prune`` once per run).

The suite runs JAX's cache without its own size cap: with a cap, jax 0.10 takes a file lock and
rewrites an access-time file on every read, and reads the access time of every entry (with etils
installed, two user/group lookups per file) before every write, 0.2-0.5 s per new program in a
folder of the suite's size, and one entry missing its access-time file makes every later write fail.
Instead, this keeps the folder under ``limit`` bytes once per run, oldest entries first.
"""

from __future__ import annotations

import os
from pathlib import Path

LIMIT = 4 * 2**30  # bytes of entries kept: the suite writes ~0.2 GB per version of its programs


def prune(folder: str | Path, limit: int = LIMIT) -> list[str]:
    """Delete the oldest entries (by write time) of the JAX cache at ``folder`` until the rest fit in
    ``limit`` bytes, and any access-time file left by a capped run; return the deleted entries' keys."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    entries, stale = [], []
    with os.scandir(folder) as found:
        for item in found:
            if item.name.endswith("-cache"):
                stat = item.stat()
                entries.append((stat.st_mtime, stat.st_size, item.name.removesuffix("-cache")))
            elif item.name.endswith("-atime"):
                stale.append(item.name)
    for name in stale:
        (folder / name).unlink(missing_ok=True)
    total, deleted = sum(size for _, size, _ in entries), []
    for _, size, key in sorted(entries):
        if total <= limit:
            break
        (folder / f"{key}-cache").unlink(missing_ok=True)
        total -= size
        deleted.append(key)
    return deleted
