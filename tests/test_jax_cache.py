"""The suite's workaround for jax's size-capped compilation cache (tests/jax_cache.py)."""

from __future__ import annotations

import pytest
from jax_cache import give_orphans_access_times

lru_cache = pytest.importorskip("jax._src.lru_cache", reason="jax's own LRU cache module (jax 0.10)")


def test_one_orphan_stops_every_write_until_it_gets_an_access_time(tmp_path):
    cache = lru_cache.LRUCache(str(tmp_path), max_size=2**20)
    cache.put("kept", b"1")
    (tmp_path / "orphan-cache").write_bytes(b"2")  # what a process without a size cap leaves
    with pytest.raises(FileNotFoundError, match="orphan-atime"):
        cache.put("new", b"3")

    assert give_orphans_access_times(tmp_path) == ["orphan"]
    assert give_orphans_access_times(tmp_path) == []  # the complete entries are left as they are
    cache.put("new", b"3")
    assert cache.get("new") == b"3" and cache.get("orphan") == b"2"


def test_the_orphan_is_the_first_entry_evicted(tmp_path):
    (tmp_path / "orphan-cache").write_bytes(b"x" * 10)
    give_orphans_access_times(tmp_path)
    cache = lru_cache.LRUCache(str(tmp_path), max_size=25)
    cache.put("older", b"y" * 10)
    cache.put("newer", b"z" * 10)  # 30 bytes > 25: one entry goes, the orphan
    assert cache.get("orphan") is None and cache.get("older") == b"y" * 10


def test_a_missing_folder_is_no_error(tmp_path):
    assert give_orphans_access_times(tmp_path / "absent") == []
