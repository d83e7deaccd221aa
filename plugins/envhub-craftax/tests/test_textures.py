"""The pixel variants' texture cache lives in a user folder, not in craftax's package folder."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import craftax.craftax_classic.constants as classic
import pytest
from envhub_craftax.textures import use_user_texture_cache


@pytest.fixture
def package_file(tmp_path, monkeypatch) -> Path:
    """craftax's own texture path, moved into ``tmp_path/package`` (no file there yet); XDG_CACHE_HOME in tmp_path."""
    own = tmp_path / "package" / "assets" / "texture_cache_classic.pbz2"
    own.parent.mkdir(parents=True)
    monkeypatch.setattr(classic, "TEXTURE_CACHE_FILE", str(own))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return own


def test_craftax_saves_and_finds_its_textures_in_the_user_folder(package_file, tmp_path, monkeypatch):
    target = use_user_texture_cache("Craftax-Classic-Pixels-v1")
    version = importlib.metadata.version("craftax")
    assert target == tmp_path / "cache" / "envhub" / f"craftax-{version}" / "texture_cache_classic.pbz2"
    assert classic.TEXTURE_CACHE_FILE == str(target)

    # craftax's own loader, uncached, with a cheap stand-in for the minute of drawing
    monkeypatch.setattr(classic, "load_all_textures_given_size", lambda size: {"size": size})
    classic.load_all_textures.__wrapped__()
    assert target.is_file() and not package_file.exists()
    assert classic.load_compressed_pickle(str(target))[classic.BLOCK_PIXEL_SIZE_AGENT] == {
        "size": classic.BLOCK_PIXEL_SIZE_AGENT
    }
    assert use_user_texture_cache("Craftax-Classic-Pixels-v1") == target  # a second env: the same file


def test_a_file_in_craftax_package_folder_is_kept(package_file):
    package_file.write_bytes(b"textures")
    assert use_user_texture_cache("Craftax-Classic-Pixels-v1") == package_file
    assert classic.TEXTURE_CACHE_FILE == str(package_file)


def test_a_cache_folder_that_cannot_be_made_leaves_craftax_path(package_file, tmp_path, monkeypatch):
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))
    assert use_user_texture_cache("Craftax-Classic-Pixels-v1") == package_file
    assert classic.TEXTURE_CACHE_FILE == str(package_file)


def test_a_pixel_env_points_craftax_at_the_user_folder_before_craftax_draws(package_file, tmp_path, monkeypatch):
    import envhub_craftax.environment

    import envhub

    seen = []

    def craftax_constructor(name, auto_reset):  # craftax's pixel env loads its textures in here
        seen.append(classic.TEXTURE_CACHE_FILE)
        raise RuntimeError("stop before drawing")

    monkeypatch.setattr(envhub_craftax.environment, "make_craftax_env_from_name", craftax_constructor)
    with pytest.raises(Exception, match="stop before drawing"):
        envhub.make("craftax/Craftax-Classic-Pixels-v1")
    assert Path(seen[0]).parent.parent == tmp_path / "cache" / "envhub"
