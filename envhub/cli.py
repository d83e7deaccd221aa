"""The ``envhub`` command: list backends and environments, inspect, check, benchmark and record one.

Exit codes: 0 success, 1 a check failed, 2 bad usage, 3 an envhub error (unknown id, backend
not installed, plugin failure, ...). Data commands take ``--json``; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import Any

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_ENVHUB_ERROR = 0, 1, 2, 3

EPILOG = """examples:
  envhub list                          installed backends and their status
  envhub list gymnax                   every environment id of a backend
  envhub info gymnax/CartPole-v1       spaces, dtypes, batching
  envhub check gymnax/Pendulum-v1      run the conformance kit on one environment
  envhub bench gymnax/CartPole-v1 -n 1,64,1024 --json out.json --plot out.png
  envhub info gymnax/CartPole-v1 -k max_steps_in_episode=100   (backend kwargs)
  envhub record gymnasium/LunarLander-v3 --steps 300 --out lander.gif

exit codes: 0 ok, 1 a check failed, 2 bad usage, 3 envhub error (unknown id, missing backend, ...)
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="envhub",
        description="One functional JAX API for RL environments from any backend plugin.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("list", help="list backends, or the environments of one backend")
    p.add_argument("prefix", nargs="?", help="a backend prefix, e.g. gymnax")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    def env_command(name: str, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help)
        p.add_argument("env_id", metavar="ID", help="environment id, e.g. gymnax/CartPole-v1")
        p.add_argument("-n", "--num-envs", type=int, default=None, help="batch size (default: one environment)")
        p.add_argument(
            "-k",
            "--kwarg",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="backend keyword argument (VALUE is a Python literal or a string); repeatable",
        )
        p.add_argument("--json", action="store_true", help="print JSON instead of text")
        return p

    env_command("info", "show an environment's spaces, dtypes and batching")
    p = env_command("check", "run the conformance kit on one environment")
    p.add_argument("--only", default=None, help="comma-separated check names (default: all)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p = env_command("record", "run a policy and write the episode to a GIF, MP4 or HTML file")
    p.add_argument("--out", required=True, metavar="PATH", help="episode.gif, episode.mp4 or (brax) episode.html")
    p.add_argument("--steps", type=int, default=200, help="steps to run (default 200); steps + 1 frames")
    p.add_argument("--policy", choices=["random"], default="random", help="the policy (default random)")
    p.add_argument("--index", type=int, default=0, help="which environment of a batch to draw (default 0)")
    p.add_argument("--seed", type=int, default=0, help="the key's seed (default 0)")
    p.add_argument("--fps", type=int, default=30, help="frames per second of the file (default 30)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p = sub.add_parser("bench", help="measure steps per second of a jitted lax.scan rollout")
    p.add_argument("env_id", metavar="ID", help="environment id, e.g. gymnax/CartPole-v1")
    p.add_argument(
        "-n", "--num-envs", default="1", metavar="N[,N...]", help="batch sizes to measure, comma-separated (default 1)"
    )
    p.add_argument("-k", "--kwarg", action="append", default=[], metavar="KEY=VALUE", help="backend keyword argument")
    p.add_argument("--steps", type=int, default=1000, help="scan length per repeat (default 1000)")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats; the median is reported (default 5)")
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        default=None,
        metavar="PATH",
        help="write results as JSON to PATH (or stdout without PATH)",
    )
    p.add_argument("--plot", default=None, metavar="PATH", help="write a PNG plot of steps/s against num_envs")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code."""
    args = _parser().parse_args(argv)
    from envhub.errors import EnvhubError

    try:
        return int(COMMANDS[args.command](args))
    except EnvhubError as exc:
        print(f"envhub: error: {exc}", file=sys.stderr)
        return EXIT_ENVHUB_ERROR
    except _UsageError as exc:
        print(f"envhub: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


class _UsageError(Exception):
    pass


def _version() -> str:
    from envhub._version import __version__
    from envhub.plugin_api import SUPPORTED_APIS

    return f"envhub {__version__} (plugin API {', '.join(map(str, SUPPORTED_APIS))})"


def _kwargs(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            raise _UsageError(f"--kwarg {pair!r} must look like KEY=VALUE with KEY a Python identifier")
        try:
            out[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[key] = raw
    return out


def _print_table(rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


def cmd_list(args: argparse.Namespace) -> int:
    import envhub

    if args.prefix is None:
        backends = envhub.list_backends()
        if args.json:
            print(json.dumps([b.__dict__ for b in backends], indent=2))
            return EXIT_OK
        if not backends:
            from envhub.plugin_api import compatible_core_range

            print(
                f'No envhub backends installed; install one, e.g. pip install "envhub[gymnax]{compatible_core_range()}"'
            )
            return EXIT_OK
        _print_table(
            [[b.prefix, b.distribution, b.version, "-" if b.api is None else str(b.api), b.status] for b in backends],
            ["PREFIX", "DISTRIBUTION", "VERSION", "API", "STATUS"],
        )
        for b in backends:
            if b.reason:
                print(f"\n{b.prefix}: {b.reason}")
        return EXIT_OK
    specs = envhub.list_envs(args.prefix)
    if args.json:
        print(
            json.dumps([{"id": s.id, "available": s.available, "reason": s.unavailable or ""} for s in specs], indent=2)
        )
        return EXIT_OK
    for s in specs:
        print(s.id if s.available else f"{s.id}  (unavailable: {s.unavailable})")
    print(
        f"\n{sum(s.available for s in specs)} available, {sum(not s.available for s in specs)} unavailable",
        file=sys.stderr,
    )
    return EXIT_OK


def _make(args: argparse.Namespace) -> Any:
    import envhub

    return envhub.make(args.env_id, num_envs=args.num_envs, **_kwargs(args.kwarg))


def cmd_info(args: argparse.Namespace) -> int:
    import jax

    import envhub
    from envhub import host_callback

    with _make(args) as env:
        _, ts = jax.eval_shape(env.init, jax.random.key(0))
        metadata = dict(env.metadata)
        prefix = env.id.partition("/")[0]
        plugin = next((b for b in envhub.list_backends() if b.prefix == prefix), None)
        info = {
            "id": env.id,
            "class": type(env.unwrapped).__name__,
            "backend": f"{plugin.distribution} {plugin.version}" if plugin else prefix,
            "library": metadata.pop("library", None),
            "jax": jax.__version__,
            "runs_on": "device (pure JAX)"
            if env.is_jax_native
            else f"host (CPU, stepped through {host_callback.kind})",
            "num_envs": env.num_envs,
            "jax_native": env.is_jax_native,
            "jittable": True,
            "vmappable": env.is_jax_native and env.num_envs is None,
            "time_limit": metadata.pop("time_limit", None),
            "render_modes": list(env.render_modes),
            "action_space": repr(env.action_space),
            "observation_space": repr(env.observation_space),
            "single_action_space": repr(env.single_action_space),
            "single_observation_space": repr(env.single_observation_space),
            "obs": _describe(ts.obs),
            "info_keys": {k: _describe(v) for k, v in ts.info.items()},
            **metadata,
        }
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        for key, value in info.items():
            print(f"{key:<18} {value}")
    return EXIT_OK


def _describe(tree: Any) -> Any:
    import jax

    return jax.tree.map(lambda x: f"{x.dtype}{list(x.shape)}", tree)


def cmd_record(args: argparse.Namespace) -> int:
    import jax

    import envhub
    from envhub.render import check_path

    if args.steps < 1 or args.fps < 1:
        raise _UsageError("--steps and --fps must be at least 1")
    check_path(args.out)  # before making the environment

    def on_frame(i: int, total: int) -> None:
        if not args.quiet and (i == total or i % max(1, total // 100) == 0):
            done = 30 * i // total
            end = "\n" if i == total else ""
            print(f"\rdrawing [{'#' * done}{'.' * (30 - done)}] {i}/{total}", end=end, file=sys.stderr, flush=True)

    with _make(args) as env:
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


def cmd_check(args: argparse.Namespace) -> int:
    import envhub
    from envhub import testing

    kwargs = _kwargs(args.kwarg)
    spec = envhub.default_registry().spec(args.env_id)
    options = testing.options_for(spec)
    only = args.only.split(",") if args.only else None
    unknown = [n for n in only or [] if n not in testing.CHECKS]
    if unknown:
        raise _UsageError(f"--only {unknown[0]!r} is not a check; the checks are: {', '.join(testing.CHECKS)}")

    def make_env(**extra: Any) -> Any:
        return envhub.make(args.env_id, num_envs=args.num_envs, **{**kwargs, **extra})

    def on_start(name: str, i: int, total: int) -> None:
        if not args.quiet:
            print(f"[{i + 1:2d}/{total}] {name} ...", file=sys.stderr, flush=True)

    results = testing.run_checks(make_env, options, only=only, on_start=on_start)
    if args.json:
        print(
            json.dumps(
                {
                    "id": spec.id,
                    "passed": not any(r.failed for r in results),
                    "checks": [{**dataclasses.asdict(r), "passed": r.passed} for r in results],
                },
                indent=2,
            )
        )
    else:
        print(f"envhub check {spec.id}" + (f" (num_envs={args.num_envs})" if args.num_envs else ""))
        print(testing.format_report(results))
    return EXIT_CHECK_FAILED if any(r.failed for r in results) else EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    import envhub
    from envhub import bench

    if args.steps < 1 or args.repeats < 1:
        raise _UsageError("--steps and --repeats must be at least 1")
    try:
        sizes = [int(n) for n in args.num_envs.split(",")]
    except ValueError:
        raise _UsageError(
            f"--num-envs {args.num_envs!r} must be comma-separated positive ints, e.g. 1,64,1024"
        ) from None
    if any(n < 1 for n in sizes):
        raise _UsageError(f"--num-envs {args.num_envs!r} must be comma-separated positive ints, e.g. 1,64,1024")
    kwargs = _kwargs(args.kwarg)

    def make_env(n: int | None) -> Any:
        return envhub.make(args.env_id, num_envs=n, **kwargs)

    results = []
    for size in sizes:

        def on_repeat(i: int, total: int, size: int = size) -> None:
            if not args.quiet:
                bar = "#" * i + "." * (total - i)
                end = "\n" if i == total else ""
                print(f"\rnum_envs={size:<6} [{bar}] {i}/{total}", end=end, file=sys.stderr, flush=True)

        results.append(bench.measure(make_env, size, args.steps, args.repeats, on_repeat))
    document = bench.report(results)
    if args.json == "-":
        print(json.dumps(document, indent=2))
    else:
        if args.json:
            with open(args.json, "w") as f:
                json.dump(document, f, indent=2)
        _print_table(
            [[r["num_envs"], f"{r['compile_s']:.2f}", f"{r['steps_per_s']:,.0f}"] for r in results],
            ["NUM_ENVS", "COMPILE_S", "STEPS/S"],
        )
        print(
            f"{results[0]['id']}: {args.steps} steps per rollout, median of {args.repeats} repeats, "
            f"jax {document['machine']['jax']} on {document['machine']['device']}"
        )
    if args.plot:
        bench.plot({results[0]["id"]: results}, args.plot, title=results[0]["id"])
    return EXIT_OK


COMMANDS = {"list": cmd_list, "info": cmd_info, "check": cmd_check, "bench": cmd_bench, "record": cmd_record}


if __name__ == "__main__":
    sys.exit(main())
