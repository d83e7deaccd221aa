"""Keeping the suite's JAX compilation cache writable (conftest.py calls this once per run)."""

from __future__ import annotations

from pathlib import Path


def give_orphans_access_times(folder: str | Path) -> list[str]:
    """Write the missing access-time file of every entry in JAX's size-capped cache at ``folder``; return their keys.

    jax 0.10's ``LRUCache.put`` reads the access time of every entry before it writes one, so a single
    entry without its ``<key>-atime`` file (written by a process that ran without a size cap, which
    writes none, or one killed between the two writes) makes every later write fail with a warning:
    the cache stops growing and each new program compiles again in every run. Marking the orphans as
    the oldest entries makes them the first to go when the cache is full.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    names = {path.name for path in folder.iterdir()}
    orphans = [n.removesuffix("-cache") for n in names if n.endswith("-cache") and f"{n[:-6]}-atime" not in names]
    for key in orphans:
        (folder / f"{key}-atime").write_bytes((0).to_bytes(8, "little"))
    return orphans
