"""``envhub record ID --out PATH``: run a policy and write the episode as GIF, MP4 or (brax) HTML."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from envhub.cli.common import EXIT_OK, UsageError, add_env_arguments, make_env

NAME = "record"


def add_arguments(sub: Any) -> argparse.ArgumentParser:
    """Add the ``envhub record`` parser to ``sub`` (argparse subparsers)."""
    p = add_env_arguments(sub.add_parser(NAME, help="run a policy and write the episode to a GIF, MP4 or HTML file"))
    p.add_argument("--out", required=True, metavar="PATH", help="episode.gif, episode.mp4 or (brax) episode.html")
    p.add_argument("--steps", type=int, default=200, help="steps to run (default 200); steps + 1 frames")
    p.add_argument("--policy", choices=["random"], default="random", help="the policy (default random)")
    p.add_argument("--index", type=int, default=0, help="which environment of a batch to draw (default 0)")
    p.add_argument("--seed", type=int, default=0, help="the key's seed (default 0)")
    p.add_argument("--fps", type=int, default=30, help="frames per second of the file (default 30)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p


def run(args: argparse.Namespace) -> int:
    import jax

    import envhub
    from envhub.tools.render import check_path, use_silent_sdl_drivers

    use_silent_sdl_drivers()  # before any plugin imports pygame: no ALSA or Wayland noise on stderr
    if args.steps < 1 or args.fps < 1:
        raise UsageError("--steps and --fps must be at least 1")
    check_path(args.out)  # before making the environment

    def on_frame(i: int, total: int) -> None:
        if not args.quiet and (i == total or i % max(1, total // 100) == 0):
            done = 30 * i // total
            end = "\n" if i == total else ""
            print(f"\rdrawing [{'#' * done}{'.' * (30 - done)}] {i}/{total}", end=end, file=sys.stderr, flush=True)

    with make_env(args) as env:
        policy = envhub.random_policy(env)
        frames = envhub.record(
            env,
            policy,
            jax.random.key(args.seed),
            args.steps,
            args.out,
            index=args.index,
            fps=args.fps,
            on_frame=on_frame,
        )
        env_id = env.id
    if args.json:
        print(json.dumps({"id": env_id, "path": args.out, "frames": frames, "steps": args.steps}))
    else:
        print(f"wrote {frames} frames of {env_id} ({args.policy} policy) to {args.out}")
    return EXIT_OK


__all__ = ["NAME", "add_arguments", "run"]
