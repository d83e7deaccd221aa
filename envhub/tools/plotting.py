"""How envhub's throughput plots look, in one place: ``envhub bench --plot`` (``tools.bench.figure``) and the
benchmarks' per-backend panels (benchmarks/plot_results.py may import this; envhub never imports benchmarks).

One small panel per backend, log scales with ``2k``/``1M`` tick labels, the legend outside the axes (it never
covers a point), and the Okabe-Ito palette: its colours stay apart with every common colour-vision deficiency,
and every series also has its own marker shape. matplotlib is imported only when a figure is drawn.
"""

from __future__ import annotations

from typing import Any

#: Okabe & Ito (2008), "Color Universal Design" (and grey for a second peer hub).
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000", "#999999")
#: ``(colour, marker)`` of envhub itself: blue circles.
ENVHUB = ("#0072B2", "o")
#: envhub in another mode, or through another backend.
ENVHUB_ALTS = [("#56B4E9", "P"), ("#CC79A7", "h")]
#: A backend's own loops, its raw loop first (orange squares).
RAWS = [("#E69F00", "s"), ("#009E73", "^"), ("#000000", "D"), ("#F0E442", "v")]
#: Peer hubs.
PEERS = [("#D55E00", "X"), ("#999999", "*")]
#: Series with no role (one per environment id in ``envhub bench``), in this order: each its colour and marker.
SERIES = [ENVHUB, *RAWS, *ENVHUB_ALTS, *PEERS]


def pyplot(purpose: str) -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files, no window).

    Raises:
        MissingDependencyError: matplotlib is not installed; the message names ``purpose``.
    """
    try:
        import matplotlib
    except ImportError:
        from envhub.errors import MissingDependencyError

        raise MissingDependencyError(purpose, "matplotlib", "pip install matplotlib") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def steps_label(value: float, _pos: Any = None) -> str:
    """A count as a short tick label: ``500``, ``2k``, ``1.5M``."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def log_count_axis(axis: Any) -> None:
    """Majors at 1, 2 and 5 of each decade of a log ``axis`` (``ax.xaxis``/``ax.yaxis``), labelled by ``steps_label``."""
    from matplotlib import ticker

    axis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(ticker.FuncFormatter(steps_label))
    axis.set_minor_formatter(ticker.NullFormatter())


def legend_outside(ax: Any) -> None:
    """The legend to the right of ``ax``, outside it (use a figure with ``layout="constrained"`` to make room)."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5, frameon=False, borderaxespad=0)


__all__ = [
    "ENVHUB",
    "ENVHUB_ALTS",
    "OKABE_ITO",
    "PEERS",
    "RAWS",
    "SERIES",
    "legend_outside",
    "log_count_axis",
    "pyplot",
    "steps_label",
]
