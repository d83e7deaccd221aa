"""benchmarks/plot_results.py draws the committed run files (one axes per backend), and the gallery's GIFs are
small and all on its page. Cheap: nothing is measured or recorded here (matplotlib's Agg, Pillow)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from examples_loader import load_file

from envhub.tools.plotting import OKABE_ITO

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
GALLERY = ROOT / "docs" / "assets" / "gallery"


@pytest.fixture(scope="module")
def plot_results():
    pytest.importorskip("matplotlib")
    return load_file(ROOT / "benchmarks" / "plot_results.py", "envhub_plot_results")


def test_the_committed_results_draw_one_axes_per_backend(plot_results, tmp_path, monkeypatch, capsys):
    from matplotlib.figure import Figure

    saved = []
    original = Figure.savefig

    def savefig(fig, path, *args, **kwargs):
        saved.append([ax.get_title(loc="left").split("\n")[0] for ax in fig.axes])
        return original(fig, path, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    out = tmp_path / "throughput.png"
    plot_results.main(["--results", str(RESULTS), "--out", str(out)])  # the command docs/performance.md gives
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    backends = ["gymnax", "gymnasium", "envpool", "brax", "pgx", "jaxmarl", "ale", "octax", "jaxatari", "factoriax"]
    assert len(saved) == 1 and len(saved[0]) == len(backends)  # one axes per backend, nothing else
    assert [re.sub(r"[$\\{}]|bf", "", title).split()[0] for title in saved[0]] == backends
    printed = capsys.readouterr().out
    assert "pgx: 11 cases from pgx_games.json" in printed and "gymnax: 4 cases from results.json, peers.json" in printed


def test_every_loop_of_a_panel_has_its_own_colour_and_marker(plot_results):
    for panel in plot_results.panels(RESULTS):
        loops = list(dict.fromkeys(loop for _, row in panel.rows for loop in row))
        styles = [plot_results._style(loop, panel, loops) for loop in loops]
        assert len(set(styles)) == len(styles), panel.backend
        assert panel.raw in loops and "envhub" in loops, panel.backend
        assert all(colour.upper() in OKABE_ITO for colour, _ in styles)


def test_a_folder_with_only_a_suite_run_draws_its_backends(plot_results, tmp_path):
    (tmp_path / "results.json").write_bytes((RESULTS / "results.json").read_bytes())
    drawn = plot_results.plot(tmp_path, tmp_path / "throughput.png")
    assert [p.backend.split()[0] for p in drawn] == ["gymnax", "gymnasium", "envpool", "brax"]
    assert all(p.sources == ["results.json"] for p in drawn)
    assert (tmp_path / "throughput.png").stat().st_size > 0


def test_the_gallery_page_shows_every_committed_gif_and_each_is_small():
    page = (ROOT / "docs" / "gallery.md").read_text()
    shown = set(re.findall(r"\(assets/gallery/([\w-]+\.gif)\)", page))
    committed = {p.name for p in GALLERY.glob("*.gif")}
    assert committed and shown == committed
    for gif in GALLERY.glob("*.gif"):
        assert gif.stat().st_size <= 300 * 1024, gif.name
    gallery = load_file(ROOT / "scripts" / "make_gallery.py", "envhub_make_gallery")
    for shot in gallery.SHOTS:  # each backend: its GIF, or a line saying why it has none
        assert f"{shot.backend}.gif" in committed or f"**`{shot.backend}`**" in page, shot.backend
        assert f"`{' '.join(shot.command(shot.backend + '.gif'))}`" in page or f"{shot.backend}.gif" not in committed


def test_gallery_shrink_fits_a_gif_under_the_limit(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    gallery = load_file(ROOT / "scripts" / "make_gallery.py", "envhub_make_gallery")
    noise = [Image.effect_noise((480, 360), 80 + i).convert("RGB") for i in range(12)]
    src, dest = tmp_path / "big.gif", tmp_path / "small.gif"
    noise[0].save(src, save_all=True, append_images=noise[1:], duration=100, loop=0)
    info = gallery.shrink(src, dest, width=320, max_frames=6, max_kb=40, fps=10)
    assert info["frames"] <= 6 and info["size"][0] <= 320 and dest.stat().st_size <= 40 * 1024
