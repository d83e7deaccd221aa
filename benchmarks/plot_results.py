"""Draw benchmarks/results/throughput.png from the committed run files: one small panel per backend.

Each panel is one backend: a row per measured case (env, batch size), one marker per loop on a log axis of
env steps per second: envhub, the raw backend's own loop(s) and the peer hubs where ``peers.json`` measured
them. The row's label ends with envhub's ratio to the backend's own loop (the panel's subtitle names that
loop and the run files the panel is drawn from). Nothing is measured here: it plots what the files hold.
Colours are the Okabe-Ito palette (colour-blind safe) and every loop also has its own marker shape.

    python benchmarks/plot_results.py [--results benchmarks/results] [--out benchmarks/results/throughput.png]

A panel is drawn when one of its files is in ``--results`` (``benchmarks/suite.py`` calls ``plot`` after a
run, so its own results.json is drawn with whatever run files lie beside it).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from envhub.tools.plotting import ENVHUB, ENVHUB_ALTS, PEERS, RAWS, log_count_axis, pyplot  # one look for all plots

HERE = Path(__file__).resolve().parent

Row = tuple[str, dict[str, float]]  # (case label, {loop: steps/s})


@dataclass
class Panel:
    backend: str
    sources: list[str]  # run files, relative to the results folder
    rows: list[Row]
    raw: str  # the loop envhub's ratio is taken against


def _load(results: Path, name: str):
    path = results / name
    return json.loads(path.read_text()) if path.is_file() else None


def _envs(n: int) -> str:
    return f"{n} env" if n == 1 else f"{n} envs"


def _comparisons(rows: list[dict], envhub_as: dict[str, str] | None = None, case=None) -> list[Row]:
    """Rows of ``comparison_row`` dicts grouped by case: one row per (env, num_envs), every loop in it."""
    grouped: dict[str, dict[str, float]] = {}
    for r in rows:
        label = case(r) if case else f"{r['env']}, {_envs(r['num_envs'])}"
        loops = grouped.setdefault(label, {})
        loops[(envhub_as or {}).get(r["envhub"], r["envhub"])] = r["envhub_steps_per_s"]
        loops[r["raw"]] = r["raw_steps_per_s"]
        if "raw_key_reused_steps_per_s" in r:
            loops[f"{r['raw'].removesuffix(')')}, key reused)"] = r["raw_key_reused_steps_per_s"]
    return list(grouped.items())


def _peers(results: Path, suite_prefix: str, label: str, rename: dict[str, str]) -> tuple[list[Row], list[str]]:
    peers = _load(results, "peers.json") or []
    for suite in peers:
        if suite["suite"].startswith(suite_prefix):
            loops = {rename.get(k, k): v for k, v in suite["steps_per_s"].items()}
            return [(f"{label}, {_envs(suite['num_envs'])} (peers run)", loops)], ["peers.json"]
    return [], []


def _suite_rows(results: Path, backend: str) -> list[dict]:
    doc = _load(results, "results.json") or {}
    return [r for r in doc.get("comparisons", []) if r["backend"] == backend]


def _gymnax(results: Path) -> Panel | None:
    rows = _comparisons(_suite_rows(results, "gymnax"))
    peer_rows, peer_src = _peers(results, "gymnax", "CartPole-v1", {})
    if not rows and not peer_rows:
        return None
    return Panel("gymnax", (["results.json"] if rows else []) + peer_src, rows + peer_rows, "gymnax (raw)")


def _gymnasium(results: Path) -> Panel | None:
    rows = _comparisons(_suite_rows(results, "gymnasium"), {"envhub scan": "envhub"})
    return Panel("gymnasium", ["results.json"], rows, "jax policy loop") if rows else None


def _envpool(results: Path) -> Panel | None:
    own = _load(results, "envpool_envs.json")
    source, rows = ("envpool_envs.json", own) if own else ("results.json", _suite_rows(results, "envpool"))
    rows = _comparisons(rows, {"envhub scan": "envhub"})
    peer_rows, peer_src = _peers(results, "envpool", "CartPole-v1", {"envpool xla (raw)": "envpool xla scan"})
    if not rows and not peer_rows:
        return None
    return Panel("envpool", ([source] if rows else []) + peer_src, rows + peer_rows, "envpool xla scan")


def _brax(results: Path) -> Panel | None:
    # The suite runs brax_envs.py with its default episode lengths (1000, then 50) for each (env, num_envs):
    # results.json does not hold the length, so it is read from that order.
    seen: dict[tuple[str, int, str], int] = {}

    def case(r: dict) -> str:
        key = (r["env"], r["num_envs"], r["envhub"])
        seen[key] = seen.get(key, -1) + 1
        length = (1000, 50)[seen[key]] if seen[key] < 2 else f"#{seen[key] + 1}"
        return f"{r['env']}, {_envs(r['num_envs'])}, ep. {length}"

    # envhub's default is real resets (a fresh state per episode); cached is brax's own scheme, as an option
    modes = {"envhub real": "envhub", "envhub cached": "envhub (reset_mode=cached)"}
    rows = _comparisons(_suite_rows(results, "brax"), modes, case=case)
    peer_rows, peer_src = _peers(results, "brax", "inverted_pendulum", {})
    peer_rows = [(label.replace(" (peers run)", ", ep. 50 (peers run)"), loops) for label, loops in peer_rows]
    if not rows and not peer_rows:
        return None
    return Panel("brax (mjx)", (["results.json"] if rows else []) + peer_src, rows + peer_rows, "brax (raw)")


def _ale(results: Path) -> Panel | None:
    data = _load(results, "ale_xla.json")
    if not data:
        return None
    grouped: dict[str, dict[str, float]] = {}
    rename = {"envhub ale": "envhub", "envhub envpool": "envhub (envpool backend)"}
    for r in data:
        frames = "full episodes" if r["max_frames"] >= 100_000 else f"episodes of {r['max_frames']} frames"
        label = f"{r['game'].capitalize()}, {_envs(r['num_envs'])}, {r['preset']} preset, {frames}"
        grouped.setdefault(label, {})[rename.get(r["loop"], r["loop"])] = r["steps_per_s"]
    return Panel("ale", ["ale_xla.json"], list(grouped.items()), "ale xla scan")


def _simple(backend: str, file: str, raw: str) -> Callable[[Path], Panel | None]:
    def panel(results: Path) -> Panel | None:
        data = _load(results, file)
        return Panel(backend, [file], _comparisons(data), raw) if data else None

    return panel


PANELS: list[Callable[[Path], Panel | None]] = [
    _gymnax,
    _gymnasium,
    _envpool,
    _brax,
    _simple("pgx", "pgx_games.json", "pgx (raw)"),
    _simple("jaxmarl", "jaxmarl_envs.json", "jaxmarl (raw)"),
    _ale,
    _simple("octax", "octax_games.json", "octax (raw)"),
    _simple("jaxatari (placeholder sprites)", "jaxatari_games.json", "jaxatari (raw)"),
    _simple("factoriax", "factoriax_envs.json", "factoriax (raw)"),
]


def panels(results: Path) -> list[Panel]:
    """Every panel that has data in ``results``, in the order of ``PANELS``."""
    return [p for p in (make(results) for make in PANELS) if p is not None and p.rows]


def _is_peer(loop: str) -> bool:
    return any(name in loop.lower() for name in ("jaxnasium", "gxm"))


def _style(loop: str, panel: Panel, loops: list[str]) -> tuple[str, str]:
    """The colour and marker of a loop: envhub blue circles, the raw loops orange first, peers vermillion."""
    if loop == "envhub":
        return ENVHUB
    groups = (
        ([n for n in loops if n.startswith("envhub") and n != "envhub"], ENVHUB_ALTS),
        ([n for n in loops if _is_peer(n)], PEERS),
        ([panel.raw] + [n for n in loops if n != panel.raw and not n.startswith("envhub") and not _is_peer(n)], RAWS),
    )
    for names, styles in groups:
        if loop in names:
            return styles[names.index(loop) % len(styles)]
    raise AssertionError(loop)


def plot(results: Path, out: Path) -> list[Panel]:
    """Write the figure of every panel with data in ``results`` to ``out``; return the panels drawn."""
    plt = pyplot("benchmarks/plot_results.py")
    drawn = panels(results)
    if not drawn:
        raise SystemExit(f"no benchmark run file in {results}: nothing to plot")
    heights = [0.9 + 0.3 * len(p.rows) for p in drawn]
    fig, axes = plt.subplots(
        len(drawn),
        1,
        figsize=(9.5, sum(heights) + 0.6),
        gridspec_kw={"height_ratios": heights},
        layout="constrained",
        squeeze=False,
    )
    for ax, panel in zip(axes[:, 0], drawn):
        loops = list(dict.fromkeys(loop for _, row in panel.rows for loop in row))
        loops.sort(key=lambda n: (n != "envhub", not n.startswith("envhub"), n != panel.raw))
        spread = 0.6 / max(1, len(loops) - 1)
        for j, loop in enumerate(loops):
            colour, marker = _style(loop, panel, loops)
            ys = [i - 0.3 + j * spread for i, (_, row) in enumerate(panel.rows) if loop in row]
            xs = [row[loop] for _, row in panel.rows if loop in row]
            ax.scatter(
                xs, ys, color=colour, marker=marker, s=42, label=loop, zorder=3, edgecolors="white", linewidths=0.5
            )
        labels = []
        for case, row in panel.rows:
            ratio = row["envhub"] / row[panel.raw] if "envhub" in row and panel.raw in row else None
            labels.append(f"{case}   {ratio:.2f}×" if ratio is not None else case)
        ax.set_yticks(range(len(panel.rows)), labels, fontsize=8)
        ax.set_ylim(len(panel.rows) - 0.5, -0.5)
        ax.set_xscale("log")
        ax.grid(True, axis="x", which="both", alpha=0.3)
        ax.grid(True, axis="y", alpha=0.15)
        log_count_axis(ax.xaxis)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_xlabel("env steps / s (log scale)", fontsize=8)
        lo, hi = min(min(r.values()) for _, r in panel.rows), max(max(r.values()) for _, r in panel.rows)
        mid = (lo * hi) ** 0.5
        # at least a decade (markers that tie do not look far apart), and room at both ends for the markers
        half = max(3.0, (hi / lo) ** 0.5 * 1.4)
        ax.set_xlim(mid / half, mid * half)
        ax.set_title(
            f"$\\bf{{{panel.backend.split(' ')[0]}}}$ {' '.join(panel.backend.split(' ')[1:])}\n"
            f"ratio: envhub ÷ {panel.raw};  run file: {', '.join(panel.sources)}",
            loc="left",
            fontsize=9,
        )
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5, frameon=False, borderaxespad=0)
    fig.suptitle("envhub vs each backend's own loop (and peer hubs), one panel per backend; higher is better")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return drawn


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=str(HERE / "results"), help="folder of the run files")
    parser.add_argument("--out", default=None, help="PNG to write (default: RESULTS/throughput.png)")
    args = parser.parse_args(argv)
    results = Path(args.results)
    out = Path(args.out) if args.out else results / "throughput.png"
    for panel in plot(results, out):
        print(f"{panel.backend}: {len(panel.rows)} cases from {', '.join(panel.sources)}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
