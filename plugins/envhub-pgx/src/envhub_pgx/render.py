"""Draw one pgx state as uint8 RGB pixels (``PgxEnvironment.render``).

Board and card games: pgx's own SVG (``state.to_svg()``, its colour theme and scale from
``pgx.set_visualization_config``), rasterised with cairosvg, the plugin's ``render`` extra. MinAtar: its grid
drawn here from the observation, in pgx-minatar's colours (pgx-minatar's SVG goes through pyplot and
matplotlib, which neither pgx package requires, and exits the process where matplotlib is missing).
"""

from __future__ import annotations

import io
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.plugin import RenderError

#: How to install cairosvg and pillow, the plugin's ``render`` extra.
RENDER_EXTRA = 'pip install "envhub-pgx[render]"'
#: Pixels per MinAtar cell (its grid is 10x10).
MINATAR_CELL = 32


def draw(env_id: str, name: str, state: Any) -> np.ndarray:
    """One uint8 RGB frame ``(H, W, 3)`` of one (unbatched) pgx ``state`` of game ``name``.

    Raises:
        RenderError: cairosvg or the cairo system library is missing (board and card games).
    """
    if name.startswith("minatar-"):
        return draw_minatar(state)
    # pgx draws with jnp (backgammon's and shogi's boards use ``.at``), so give it JAX arrays even where
    # ``envhub.record`` hands over host (numpy) states.
    svg = jax.tree.map(jnp.asarray, state).to_svg()
    return rasterise(env_id, svg)


def rasterise(env_id: str, svg: str) -> np.ndarray:
    """``svg`` as uint8 RGB pixels, one pixel per SVG unit, on white (hex's fractional last row is transparent)."""
    cairosvg, image_module = _imports(env_id)
    png = cairosvg.svg2png(bytestring=svg.encode("utf-8"), background_color="white")
    with image_module.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def draw_minatar(state: Any) -> np.ndarray:
    """A MinAtar frame: each cell the colour of its last channel set (pgx-minatar's SVG shows the same), else black."""
    obs = np.asarray(state.observation)  # (10, 10, channels), bool
    channels = obs.shape[-1]
    # What visualize_minatar plots: the highest channel index set in a cell, 0 where none is.
    cells = np.max(obs * np.arange(1, channels + 1), axis=-1)
    frame = (palette(channels) * 255).round().astype(np.uint8)[cells]
    return np.repeat(np.repeat(frame, MINATAR_CELL, axis=0), MINATAR_CELL, axis=1)


def palette(channels: int) -> np.ndarray:
    """MinAtar's colours, black first (empty cells), then pgx-minatar's ``get_cmap(channels)``: ``(channels + 1, 3)``."""
    from pgx_minatar.utils import get_cmap

    return np.asarray([(0.0, 0.0, 0.0), *get_cmap(channels)], dtype=np.float64)


def _imports(env_id: str) -> tuple[Any, Any]:
    """cairosvg and PIL.Image, imported only when a board is drawn (``envhub list`` and training never need them)."""
    try:
        import cairosvg
        from PIL import Image
    except ImportError as exc:  # also what a None in sys.modules raises
        missing = "pillow" if exc.name == "PIL" else "cairosvg"
        raise RenderError(
            env_id,
            f"pgx draws SVG, and rasterising it needs the Python package {missing!r}, which is not installed",
            f"install the plugin's render extra: {RENDER_EXTRA}",
        ) from None
    except OSError as exc:  # cairocffi loads libcairo when cairosvg is imported
        raise RenderError(
            env_id,
            f"cairosvg is installed but cannot load the cairo system library ({exc})",
            "install the system cairo library (e.g. apt install libcairo2, or brew install cairo)",
        ) from exc
    return cairosvg, Image


__all__ = ["RENDER_EXTRA", "draw", "draw_minatar", "palette", "rasterise"]
