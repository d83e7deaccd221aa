"""The suite's JAX compilation cache stays under its size (tests/jax_cache.py)."""

from __future__ import annotations

import os

from jax_cache import prune


def _entry(folder, key, size, mtime):
    path = folder / f"{key}-cache"
    path.write_bytes(b"x" * size)
    os.utime(path, (mtime, mtime))


def test_the_oldest_entries_go_until_the_rest_fit(tmp_path):
    for key, mtime in (("new", 300), ("old", 100), ("mid", 200)):
        _entry(tmp_path, key, 10, mtime)
    assert prune(tmp_path, limit=25) == ["old"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mid-cache", "new-cache"]
    assert prune(tmp_path, limit=25) == []  # already under the limit: nothing more goes


def test_access_time_files_of_a_capped_run_are_removed(tmp_path):
    _entry(tmp_path, "kept", 10, 100)
    (tmp_path / "kept-atime").write_bytes(b"\0" * 8)
    (tmp_path / "orphan-atime").write_bytes(b"\0" * 8)
    assert prune(tmp_path, limit=100) == []
    assert [p.name for p in tmp_path.iterdir()] == ["kept-cache"]


def test_a_missing_folder_is_no_error(tmp_path):
    assert prune(tmp_path / "absent") == []
