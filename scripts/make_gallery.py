#!/usr/bin/env python3
"""Record the docs gallery: one short, small GIF per backend that can draw, into docs/assets/gallery/.

Each GIF is made in two steps, both shown on docs/gallery.md:

1. ``envhub record ID --steps N --fps F --seed 0 --out raw.gif -q`` (a random policy, one env), in its own
   process with a time limit;
2. shrunk with Pillow: scaled to at most ``--width`` pixels wide (a frame whose sides are both under half of
   it is first grown by a whole factor, pixels kept sharp), at most ``--max-frames`` frames (every k-th frame
   kept, the frame time stretched to match), one shared 64-colour palette; if the file is still over
   ``--max-kb`` it is shrunk again (narrower, fewer colours) until it fits.

A backend whose recording fails (no renderer, a missing system library, a time-out) is skipped and reported
with the last line of its error; the run goes on with the next one. ``--only gymnax,pgx`` records a few.

    python scripts/make_gallery.py [--only PREFIXES] [--timeout 600] [--out docs/assets/gallery]

Slow (each recording compiles its rollout: seconds for gymnax, minutes for brax or craftax on 2 CPU cores):
run it once and commit the GIFs; the docs build never records.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Shot:
    backend: str
    env_id: str
    steps: int
    fps: int = 10
    kwargs: tuple[str, ...] = ()  # envhub record -k KEY=VALUE
    #: "render": ``envhub record`` (the env's renderer); "observation": the env has no renderer but its
    #: observations are images, so the frames are the observations of ``envhub.rollout`` (this script's
    #: ``--observations-of``), scaled up without smoothing.
    source: str = "render"

    def command(self, out: str) -> list[str]:
        if self.source == "observation":
            cmd = ["python", "scripts/make_gallery.py", "--observations-of", self.env_id, "--steps", str(self.steps)]
            return [*cmd, "--fps", str(self.fps), "--out", out]
        cmd = ["envhub", "record", self.env_id, "--steps", str(self.steps), "--fps", str(self.fps), "--seed", "0"]
        for kw in self.kwargs:
            cmd += ["-k", kw]
        return [*cmd, "--out", out, "-q"]


#: One representative environment per backend (the first a reader would try), in the docs' order.
SHOTS = [
    Shot("gymnax", "gymnax/CartPole-v1", 60),
    Shot("brax", "brax/inverted_pendulum", 60),
    Shot("playground", "playground/CartpoleBalance", 60),
    Shot("jumanji", "jumanji/Snake-v1", 40),
    Shot("craftax", "craftax/Craftax-Classic-Pixels-v1", 40, source="observation"),
    Shot("xminigrid", "xminigrid/MiniGrid-DoorKey-8x8", 40),
    Shot("pgx", "pgx/tic_tac_toe", 20, fps=3),
    Shot("jaxmarl", "jaxmarl/MPE_simple_spread_v3", 40),
    Shot("octax", "octax/brix", 60),
    Shot("jaxatari", "jaxatari/pong", 60),
    Shot("factoriax", "factoriax/MinerBootstrap-v1", 200, fps=15),
    Shot("ale", "ale/Pong-v5", 80),
    Shot("gymnasium", "gymnasium/CartPole-v1", 60),
    Shot("envpool", "envpool/CartPole-v1", 60),
]


def resolve(cmd: list[str]) -> list[str]:
    """A shot's command as run: ``envhub`` of the running interpreter's environment (a venv's), else the
    one on PATH; ``python`` the running interpreter."""
    if cmd[0] == "python":
        return [sys.executable, *cmd[1:]]
    here = Path(sys.executable).parent / "envhub"
    return [str(here) if here.is_file() else (shutil.which("envhub") or "envhub"), *cmd[1:]]


def observation_gif(env_id: str, steps: int, fps: int, out: str, scale: int = 4) -> int:
    """Write the image observations of a random-policy ``envhub.rollout`` of ``env_id`` (one env) as a GIF."""
    import imageio.v2 as imageio
    import jax
    import numpy as np

    import envhub

    env = envhub.make(env_id)
    obs = np.asarray(envhub.rollout(env, envhub.random_policy(env), jax.random.key(0), steps)[2].obs)
    if obs.ndim != 4 or obs.shape[-1] not in (1, 3):
        raise SystemExit(f"{env_id}: its observations are {obs.shape}, not images (T, H, W, 1|3)")
    if obs.dtype != np.uint8:  # floats in [0, 1]
        obs = (np.clip(obs, 0.0, 1.0) * 255).round().astype(np.uint8)
    frames = np.repeat(np.repeat(obs, scale, axis=1), scale, axis=2)
    imageio.mimsave(out, list(frames), duration=1000 / fps, loop=0)
    return len(frames)


def shrink(src: Path, dest: Path, *, width: int, max_frames: int, max_kb: int, fps: int) -> dict:
    """Rewrite the GIF ``src`` as ``dest``: scaled down, fewer frames, one palette; ≤ ``max_kb`` if it can be."""
    from PIL import Image, ImageSequence

    with Image.open(src) as gif:
        frames = [frame.convert("RGB") for frame in ImageSequence.Iterator(gif)]
        durations = [frame.info.get("duration", 1000 // fps) for frame in ImageSequence.Iterator(gif)]
    step = max(1, -(-len(frames) // max_frames))
    kept = list(range(0, len(frames), step))
    frames = [frames[i] for i in kept]
    durations = [sum(durations[i : i + step]) for i in kept]
    colours = 64
    grow = width // max(frames[0].size)  # a small frame (a 128-pixel map): grown by whole pixels, kept sharp
    if grow >= 2:
        frames = [f.resize((f.width * grow, f.height * grow), Image.Resampling.NEAREST) for f in frames]
    while True:
        scale = min(1.0, width / frames[0].width)
        size = (max(1, round(frames[0].width * scale)), max(1, round(frames[0].height * scale)))
        small = [f.resize(size, Image.Resampling.LANCZOS) if scale < 1 else f for f in frames]
        # One palette for every frame (taken from a strip of them all): no per-frame colour flicker.
        strip = Image.new("RGB", (size[0], size[1] * min(len(small), 8)))
        for i, f in enumerate(small[:: max(1, len(small) // 8)][:8]):
            strip.paste(f, (0, size[1] * i))
        palette = strip.quantize(colors=colours, method=Image.Quantize.MEDIANCUT)
        paletted = [f.quantize(palette=palette, dither=Image.Dither.NONE) for f in small]
        paletted[0].save(
            dest, save_all=True, append_images=paletted[1:], duration=durations, loop=0, optimize=True, disposal=1
        )
        kb = dest.stat().st_size / 1024
        if kb <= max_kb or width <= 96:
            return {"frames": len(paletted), "size": list(size), "kb": round(kb, 1), "colours": colours}
        width, colours = int(width * 0.8), max(16, colours // 2)


def record(shot: Shot, out_dir: Path, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / f"{shot.backend}.gif"
        start = time.monotonic()
        try:
            proc = subprocess.run(
                resolve(shot.command(str(raw))), capture_output=True, text=True, timeout=args.timeout, cwd=ROOT
            )
        except subprocess.TimeoutExpired:
            return {"ok": False, "reason": f"timed out after {args.timeout} s"}
        seconds = round(time.monotonic() - start, 1)
        if proc.returncode != 0 or not raw.is_file():
            lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
            errors = [line for line in lines if "error" in line.lower()]
            reason = (errors or lines or [f"exit code {proc.returncode}"])[-1]
            return {"ok": False, "reason": reason, "exit": proc.returncode, "seconds": seconds}
        dest = out_dir / f"{shot.backend}.gif"
        info = shrink(raw, dest, width=args.width, max_frames=args.max_frames, max_kb=args.max_kb, fps=shot.fps)
        return {
            "ok": True,
            "file": str(dest.relative_to(ROOT)) if dest.is_relative_to(ROOT) else str(dest),
            "seconds": seconds,
            **info,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="comma-separated backend prefixes (default: every one)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "assets" / "gallery"))
    parser.add_argument("--timeout", type=int, default=600, help="seconds per recording")
    parser.add_argument("--width", type=int, default=320, help="largest width of a GIF in pixels")
    parser.add_argument("--max-frames", type=int, default=40)
    parser.add_argument("--max-kb", type=int, default=300)
    parser.add_argument("--list", action="store_true", help="print each backend's envhub record command and exit")
    parser.add_argument("--observations-of", metavar="ID", help="write ID's image observations to --out and exit")
    parser.add_argument("--steps", type=int, default=40, help="with --observations-of")
    parser.add_argument("--fps", type=int, default=10, help="with --observations-of")
    args = parser.parse_args(argv)
    if args.observations_of:
        print(f"{observation_gif(args.observations_of, args.steps, args.fps, args.out)} frames")
        return 0
    only = {p for p in args.only.split(",") if p}
    unknown = only - {s.backend for s in SHOTS}
    if unknown:
        parser.error(f"no gallery entry for {sorted(unknown)}; known: {', '.join(s.backend for s in SHOTS)}")
    shots = [s for s in SHOTS if not only or s.backend in only]
    if args.list:
        for s in shots:
            print(" ".join(s.command(f"{s.backend}.gif")))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = {}
    for shot in shots:
        print(f"== {shot.backend}: {' '.join(shot.command(shot.backend + '.gif'))}", file=sys.stderr, flush=True)
        report[shot.backend] = result = {"id": shot.env_id, **record(shot, out, args)}
        print("   " + json.dumps(result), file=sys.stderr, flush=True)
    print(json.dumps(report, indent=2))
    return 0 if all(r["ok"] for r in report.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
