"""envhub next to the hubs a user would pick instead, on the same rollouts, in one process.

Each suite times one jitted ``lax.scan`` rollout per contender, interleaved, and prints steps/s and
ratios against the raw backend's own loop. The peers are optional (never an envhub dependency):

    uv pip install -p .venv/bin/python -e ".[peers]"   # jaxnasium 0.1.1, gxm 0.4.0
    python benchmarks/peers.py [--suites gymnax,envpool,brax] [--repeats 7] [--json benchmarks/results/peers.json]

A peer that is not installed is left out with a note. What each contender does per step:

- gymnax CartPole-v1, 1024 envs: ``gymnax (raw)`` is gymnax's own ``step`` under ``vmap`` (a reset
  computed for every env every step, from a key split off the step key); ``gymnax (raw, key reused)``
  resets from the step key itself; envhub splits the key and resets only what ended (spare initial
  states); Jaxnasium's gymnax wrapper reuses the step key for the reset (a key used twice); gxm's
  calls gymnax's own ``step`` (its ``true_next_obs`` is then the next episode's first observation and
  the time limit is ``terminated``).
- envpool CartPole-v1, 64 envs: ``envpool xla (raw)`` is envpool's own ``xla()`` step (next-step
  reset: the step after an end is wasted, not the same work); envhub and Jaxnasium's
  ``EnvPoolXLAWrapper`` give a same-step reset (Jaxnasium's through a Python callback on steps where
  an env ended).
- brax inverted_pendulum, 64 envs, episodes of 50, the mjx pipeline for all: brax's own
  ``envs.create(..., auto_reset=True)`` (every episode restarts from one cached state), envhub with
  real resets, Jaxnasium's brax wrapper (brax's AutoResetWrapper under its own, real resets).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import sys
import warnings

import jax
import jax.numpy as jnp
from _timing import interleaved_medians, time_rollouts, write_json

warnings.filterwarnings("ignore", module="gymnasium")


def installed(name: str) -> str | None:
    """``"name version"`` if the distribution is installed (the label of its row), else None."""
    try:
        return f"{name} {importlib.metadata.version(name)}"
    except importlib.metadata.PackageNotFoundError:
        return None


def scan_rollout(init, step, n: int, steps: int, sample):
    """``key -> (total reward, episode ends)``: ``init(key) -> state``, then ``steps`` of
    ``step(key, state, actions) -> (state, reward, done)`` with ``sample(key, n)`` actions."""

    def run(key):
        init_key, key = jax.random.split(key)
        state = init(init_key)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            state, reward, done = step(step_key, state, sample(action_key, n))
            return (state, total + reward.sum(), ends + done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def jaxnasium_loop(env, n: int):
    """(init, step) of a Jaxnasium env wrapped in its VecEnvWrapper: one key per env, as it asks."""

    def init(key):
        return env.reset(jax.random.split(key, n))[1]

    def step(key, state, actions):
        ts, state = env.step(jax.random.split(key, n), state, actions)
        return state, ts.reward, jnp.logical_or(ts.terminated, ts.truncated)

    return init, step


def jaxnasium_vec(env_id: str, n: int, **kwargs):
    """Jaxnasium's env by id, vmapped by its VecEnvWrapper, without its default LogWrapper: (init, step)."""
    import jaxnasium as jym

    return jaxnasium_loop(jym.make(env_id, wrappers=["external_lib_wrapper", jym.VecEnvWrapper], **kwargs), n)


def jaxnasium_brax(name: str, n: int, episode_length: int):
    """Jaxnasium's BraxWrapper (time limit and auto-reset) on brax's mjx env, vmapped: (init, step)."""
    import jaxnasium as jym
    from jaxnasium.wrappers._brax import BraxWrapper

    with contextlib.redirect_stdout(sys.stderr):  # mujoco prints optional-import notices on stdout
        from brax import envs

        brax_env = envs.get_environment(name, backend="mjx")
    return jaxnasium_loop(jym.VecEnvWrapper(BraxWrapper(brax_env, max_episode_steps=episode_length)), n)


def gymnax_suite(n: int, steps: int) -> dict:
    from gymnax_cartpole import envhub_rollout, raw_gymnax_reusing_key, raw_gymnax_rollout

    runs = {
        "gymnax (raw)": raw_gymnax_rollout(n, steps),
        "gymnax (raw, key reused)": raw_gymnax_reusing_key(n, steps),
        "envhub": envhub_rollout(n, steps),
    }
    sample = lambda key, n: jax.random.randint(key, (n,), 0, 2)  # noqa: E731
    if installed("jaxnasium"):
        runs[installed("jaxnasium")] = scan_rollout(*jaxnasium_vec("gymnax:CartPole-v1", n), n, steps, sample)
    if installed("gxm"):
        import gxm

        env = gxm.make("Gymnax/CartPole-v1")

        def gxm_step(key, state, actions):
            state, ts = jax.vmap(env.step)(jax.random.split(key, n), state, actions)
            return state, ts.reward, jnp.logical_or(ts.terminated, ts.truncated)

        init = lambda key: jax.vmap(env.init)(jax.random.split(key, n))[0]  # noqa: E731
        runs[installed("gxm")] = scan_rollout(init, gxm_step, n, steps, sample)
    return {"suite": "gymnax CartPole-v1", "num_envs": n, "steps": steps, "raw": "gymnax (raw)", "runs": runs}


def envpool_suite(n: int, steps: int) -> dict:
    from envpool_envs import envhub_scan, envpool_xla_scan, raw_pool, scan_loop

    timed = {
        "envpool xla (raw)": envpool_xla_scan("CartPole-v1", n, steps, 2),
        "envhub": envhub_scan("CartPole-v1", n, steps, 2),
    }
    if installed("jaxnasium"):
        from jaxnasium.wrappers._envpool_xla import EnvPoolXLAWrapper

        pool = raw_pool("CartPole-v1", n)
        env = EnvPoolXLAWrapper(pool)

        def step(key, state, action):
            ts, state = env.step(jax.random.split(key, n), state, action)
            return state, ts.reward

        run = scan_loop(step, env.reset(jax.random.split(jax.random.key(0), n))[1], n, steps)  # a key per env
        timed[installed("jaxnasium")] = (run, pool.close)
    return {"suite": "envpool CartPole-v1", "num_envs": n, "steps": steps, "raw": "envpool xla (raw)", "timed": timed}


def brax_suite(n: int, steps: int) -> dict:
    from brax_envs import envhub_rollout, raw_brax_rollout

    runs = {
        "brax (raw)": raw_brax_rollout("inverted_pendulum", n, steps, 50, "mjx"),
        "envhub": envhub_rollout("inverted_pendulum", n, steps, 50, "mjx", "real"),
    }
    if installed("jaxnasium"):
        sample = lambda key, n: jax.random.uniform(key, (n, 1), minval=-1.0, maxval=1.0)  # noqa: E731
        runs[installed("jaxnasium")] = scan_rollout(*jaxnasium_brax("inverted_pendulum", n, 50), n, steps, sample)
    return {
        "suite": "brax inverted_pendulum (mjx, episodes of 50)",
        "num_envs": n,
        "steps": steps,
        "raw": "brax (raw)",
        "runs": runs,
    }


SUITES = {"gymnax": (gymnax_suite, 1024, 1000), "envpool": (envpool_suite, 64, 1000), "brax": (brax_suite, 64, 200)}


def measure(spec: dict, repeats: int) -> dict:
    """Time a suite's contenders; the row: steps/s, ratio to the raw loop and to envhub of each."""
    work = spec["num_envs"] * spec["steps"]
    failed = {}
    if "runs" in spec:
        for name, run in list(spec["runs"].items()):
            try:
                jax.eval_shape(run, jax.random.key(0))
            except Exception as exc:  # noqa: BLE001 - a peer that does not run on these pins is reported, not fatal
                failed[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                del spec["runs"][name]
        medians, compiles, ends = time_rollouts(spec["runs"], jax.random.key(0), repeats)
    else:  # the envpool suite: stateful pools, each run its own closure
        runs = {name: run for name, (run, _) in spec["timed"].items()}
        for run in runs.values():
            run()  # compile
        medians, compiles, ends = interleaved_medians(runs, repeats), {}, {}
        for _, close in spec["timed"].values():
            close()
    rate = {name: work / seconds for name, seconds in medians.items()}
    return {
        "suite": spec["suite"],
        "num_envs": spec["num_envs"],
        "steps": spec["steps"],
        "steps_per_s": {k: round(v, 1) for k, v in rate.items()},
        "ratio_to_raw": {k: round(v / rate[spec["raw"]], 3) for k, v in rate.items()},
        "envhub_over": {k: round(rate["envhub"] / v, 3) for k, v in rate.items() if k != "envhub"},
        "episode_ends": ends,
        "compile_s": {k: round(v, 2) for k, v in compiles.items()},
        "failed": failed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", default="gymnax,envpool,brax", help=f"comma-separated, of {sorted(SUITES)}")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", default=None, metavar="PATH", help="write the rows as JSON")
    args = parser.parse_args()

    missing = [name for name in ("jaxnasium", "gxm") if not installed(name)]
    if missing:
        print(f'not installed, left out: {", ".join(missing)} (uv pip install -e ".[peers]")', file=sys.stderr)
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}; median of {args.repeats} interleaved repeats")
    rows = []
    for name in args.suites.split(","):
        build, n, steps = SUITES[name]
        row = measure(build(n, steps), args.repeats)
        rows.append(row)
        print_row(row, n, steps)
    write_json(rows, args.json)


def print_row(row: dict, n: int, steps: int, compile_times: bool = False) -> None:
    """One suite's table: each contender's steps/s, ratio to raw and envhub's ratio to it (and compile seconds)."""
    print(f"\n{row['suite']}, {n} envs x {steps} steps")
    for who, rate in sorted(row["steps_per_s"].items(), key=lambda kv: -kv[1]):
        over = row["envhub_over"].get(who)
        print(
            f"  {who:<28} {rate / 1e6:8.3f} M steps/s   {row['ratio_to_raw'][who]:6.3f}x raw"
            + (f"   envhub is {over:.3f}x this" if over is not None else "")
            + (f"   compile {row['compile_s'].get(who, float('nan')):.2f}s" if compile_times else "")
        )
    for who, error in row["failed"].items():
        print(f"  {who:<28} does not run: {error}")


if __name__ == "__main__":
    jnp.zeros(())  # start the backend before timing anything
    main()
