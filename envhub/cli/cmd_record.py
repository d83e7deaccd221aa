"""``envhub record ID --out PATH``: run a policy and write the episode as GIF, MP4 or (brax) HTML.

Everything that can be known before the rollout is checked first: the arguments, the output path, that
the env draws, and one frame of its first state (a missing drawing library fails here, with its pip line).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from envhub.cli.common import EXIT_OK, add_env_arguments, check_output, make_env, positive_int, rollout_steps, seed
from envhub.cli.progress import Bar, Ticker

NAME = "record"
FORMATS = (".gif", ".mp4", ".html")  # envhub.tools.render.FORMATS, without importing jax here


def add_arguments(sub: Any) -> argparse.ArgumentParser:
    """Add the ``envhub record`` parser to ``sub`` (argparse subparsers)."""
    p = add_env_arguments(sub.add_parser(NAME, help="run a policy and write the episode to a GIF, MP4 or HTML file"))
    p.add_argument("--out", required=True, metavar="PATH", help="episode.gif, episode.mp4 or (brax) episode.html")
    p.add_argument("--steps", type=rollout_steps, default=200, help="steps to run (default 200); steps + 1 frames")
    p.add_argument("--policy", choices=["random"], default="random", help="the policy (default random)")
    p.add_argument("--index", type=int, default=0, help="which environment of a batch to draw (default 0)")
    p.add_argument("--seed", type=seed, default=0, help="the key's seed (default 0)")
    p.add_argument("--fps", type=positive_int, default=30, help="frames per second of the file (default 30)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p


def run(args: argparse.Namespace) -> int:
    from envhub.cli.common import UsageError

    suffix = check_output(args.out, "--out", FORMATS)
    batch = args.num_envs
    if (batch is None and args.index != 0) or (batch is not None and not 0 <= args.index < batch):
        rule = "it picks an env of a batch: add -n N, or leave it out" if batch is None else f"use 0 <= INDEX < {batch}"
        raise UsageError(f"--index {args.index} is out of range: {rule}")
    with Ticker(f"making {args.env_id}", quiet=args.quiet) as ticker:
        import jax

        import envhub
        from envhub.tools.render import use_silent_sdl_drivers

        use_silent_sdl_drivers()  # before any plugin imports pygame: no ALSA or Wayland noise on stderr
        with make_env(args) as env:
            check_drawable(env, suffix, args)
            ticker.phase(f"compiling the rollout of {env.id}" if env.is_jax_native else f"starting {env.id}")

            drawing = Bar("drawing", args.steps + 1, quiet=args.quiet)

            def on_frame(i: int, total: int) -> None:
                ticker.stop()
                if i == total or i % max(1, total // 100) == 0:
                    drawing.update(i)

            policy = envhub.random_policy(env)
            key = jax.random.key(args.seed)
            frames = envhub.record(
                env, policy, key, args.steps, args.out, index=args.index, fps=args.fps, on_frame=on_frame
            )
            env_id = env.id
    if args.json:
        print(json.dumps({"id": env_id, "path": args.out, "frames": frames, "steps": args.steps}))
    else:
        print(f"wrote {frames} frames of {env_id} ({args.policy} policy) to {args.out}")
    return EXIT_OK


def check_drawable(env: Any, suffix: str, args: argparse.Namespace) -> None:
    """Refuse, before the rollout, an env that cannot draw what ``suffix`` needs; draw one frame of a JAX-native env.

    Raises:
        RenderError: it has no renderer (the message says how to save its observations instead).
        MissingDependencyError: its drawing library is not installed (with the plugin's pip line).
    """
    import jax

    from envhub.errors import RenderError

    mode = "html" if suffix == ".html" else "rgb_array"
    if mode not in env.render_modes:
        if suffix == ".html" and "rgb_array" in env.render_modes:
            raise RenderError(env.id, "it has no HTML viewer (only brax has one)", "record to .gif or .mp4 instead")
        raise RenderError(env.id, "it has no renderer (its render_modes is empty)", _save_obs_instead(env.id, args))
    if env.is_jax_native and mode == "rgb_array":  # a host env draws its first frame before stepping anyway
        state, _ = env.init(jax.random.key(args.seed))
        try:
            env.render(state, None if env.num_envs is None else args.index)
        except Exception as exc:  # noqa: BLE001 - only a missing library is turned into its install line
            missing = _missing_drawing_library(env.id, exc)
            if missing is None:
                raise
            raise missing from None


def _save_obs_instead(env_id: str, args: argparse.Namespace) -> str:
    """A command that saves the rollout's observations to obs.npz, for this env, batch and kwargs."""
    from envhub.cli.common import parse_kwargs

    made = [repr(env_id), *([f"num_envs={args.num_envs}"] if args.num_envs else [])]
    made += [f"{k}={v!r}" for k, v in parse_kwargs(args.kwarg).items()]
    code = (
        f"import envhub, jax, numpy; env = envhub.make({', '.join(made)}); "
        f"t = envhub.rollout(env, envhub.random_policy(env), jax.random.key({args.seed}), {args.steps})[2]; "
        "numpy.savez('obs.npz', *jax.tree.leaves(t.obs))"
    )
    return f'record its observations instead, e.g. to obs.npz: python -c "{code}"'


def _missing_drawing_library(env_id: str, exc: Exception) -> Exception | None:
    """The envhub error for a drawing library missing, or None if ``exc`` is something else.

    A missing library is an ``ImportError``, or a library's own error raised from or while handling one (gymnasium's
    ``DependencyNotInstalled``, no ``ImportError`` since gymnasium 1.0); it becomes a ``MissingDependencyError``
    with the plugin's ``render`` extra if it has one. An envhub error (None) passes as the plugin wrote it.
    """
    import re

    from envhub.errors import EnvhubError, MissingDependencyError

    if isinstance(exc, EnvhubError):
        return None
    cause: BaseException | None = exc
    seen: set[int] = set()
    while cause is not None and not isinstance(cause, ImportError) and id(cause) not in seen:
        seen.add(id(cause))
        cause = cause.__cause__ or (None if cause.__suppress_context__ else cause.__context__)
    if not isinstance(cause, ImportError):
        return None
    named = re.match(r"No module named '([^']+)'|([A-Za-z_][\w.]*) is not installed", str(exc))
    package = cause.name or (named and (named.group(1) or named.group(2))) or "a drawing library"
    return MissingDependencyError(f"Drawing {env_id}", package, render_install_line(env_id.split("/")[0], package))


def render_install_line(prefix: str, package: str) -> str:
    """``pip install "<plugin's distribution>[render]"`` if the plugin has a ``render`` extra, else the package's."""
    from importlib import metadata

    from envhub.registry.discovery import ENTRY_POINT_GROUP

    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name.lower() == prefix.lower() and ep.dist is not None:
            if "render" in (ep.dist.metadata.get_all("Provides-Extra") or []):
                return f'pip install "{ep.dist.name}[render]"'
    return f"pip install {package.split('.')[0]}"


__all__ = ["FORMATS", "NAME", "add_arguments", "check_drawable", "render_install_line", "run"]
