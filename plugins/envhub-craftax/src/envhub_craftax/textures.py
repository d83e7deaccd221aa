"""Where craftax keeps the textures its pixel renderers draw with: a user cache folder, made once.

craftax computes the textures of a pixel variant on its first render (17 s for Craftax-Classic, over a
minute for Craftax on 2 CPU cores) and saves them into its own package folder. That save fails on a
read-only install (after the whole computation, in every process), and every new venv computes them
again. envhub-craftax points craftax at ``$XDG_CACHE_HOME/envhub/craftax-<version>/`` (default
``~/.cache``) instead, unless the package folder already holds the file.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
from pathlib import Path

#: The craftax module whose ``TEXTURE_CACHE_FILE`` a variant's renderer reads, by the variant's prefix.
CONSTANTS = {"Craftax-Classic": "craftax.craftax_classic.constants", "Craftax": "craftax.craftax.constants"}


def user_cache_folder() -> Path:
    """``$XDG_CACHE_HOME/envhub/craftax-<installed craftax version>`` (``~/.cache`` without XDG_CACHE_HOME)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "envhub" / f"craftax-{importlib.metadata.version('craftax')}"


def use_user_texture_cache(name: str) -> Path:
    """Point the renderer of craftax env ``name`` at the user cache folder; return the file it will use.

    craftax's ``load_all_textures`` reads the module constant ``TEXTURE_CACHE_FILE`` when first called,
    so setting it before the first render redirects both the load and the save (craftax has no option
    for this). A file already in craftax's package folder, or a folder that cannot be made, leaves
    craftax's own path.
    """
    prefix = "Craftax-Classic" if name.startswith("Craftax-Classic") else "Craftax"
    constants = importlib.import_module(CONSTANTS[prefix])
    own = Path(constants.TEXTURE_CACHE_FILE)
    if own.is_file():
        return own
    target = user_cache_folder() / own.name
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return own
    constants.TEXTURE_CACHE_FILE = str(target)
    return target
