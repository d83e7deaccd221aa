"""Where envhub's envpool fast path spends its time over envpool's own ``xla()`` step (CartPole, jitted scan).

Four loops of the same length, interleaved in one process, each on its own pool:

- ``envpool xla step``: envpool's ``xla()`` ``step`` (next-step reset; the baseline);
- ``envpool send/recv, same n``: envpool's ``xla()`` ``send``/``recv`` on a pool of ``2n`` envs answering
  ``n`` at a time, always the same ``n`` envs (the other ``n`` idle: how envhub's scheme drives the pool
  between episode ends);
- ``envpool send/recv, halves``: the same pool, the actions sent to whichever ``n`` envs the last ``recv``
  returned, so the two halves alternate and envpool steps one while the program handles the other (a
  pipeline, not the same work: shown for scale);
- ``envhub, no guard``: envhub's step without the stale-state guard (``XlaPath.core``: the spare scheme);
- ``envhub``: ``env.step`` as users call it (guard and scheme).

    python benchmarks/envpool_same_step.py [--num-envs 64] [--steps 1000] [--repeats 11] [--json out.json]
"""

from __future__ import annotations

import argparse
import warnings

import jax
from _timing import interleaved_medians, write_json
from envhub_envpool._shim import import_envpool
from envpool_envs import scan_loop

import envhub

warnings.filterwarnings("ignore", module="gymnasium")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    n, steps, envpool = args.num_envs, args.steps, import_envpool()

    sync = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=n, seed=0)
    sync.reset()
    handle, _, _, xla_step = sync.xla()

    def raw_step(key, handle, actions):
        handle, (_, reward, _, _, _) = xla_step(handle, actions)
        return handle, reward

    def async_pool(same: bool):
        pool = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=2 * n, batch_size=n, seed=0)
        pool.async_reset()
        handle, recv, send, _ = pool.xla()
        handle, first = jax.jit(recv)(handle)
        if same:  # take the other half's reset rows too: from now on only the first n envs step
            handle, _ = jax.jit(recv)(handle)

        def send_recv(key, carry, actions):
            handle, ids = carry
            handle, (_, reward, _, _, info) = recv(send(handle, actions, ids))
            return (handle, ids if same else info["env_id"]), reward

        return pool, scan_loop(send_recv, (handle, first[-1]["env_id"]), n, steps)

    same_pool, same_run = async_pool(same=True)
    halves_pool, halves_run = async_pool(same=False)

    guarded = envhub.make("envpool/CartPole-v1", num_envs=n)
    bare = envhub.make("envpool/CartPole-v1", num_envs=n)
    path = bare._xla  # the fast path of the plugin's environment (not public API: a measurement only)

    def envhub_step(key, state, actions):
        state, ts = guarded.step(key, state, actions)
        return state, ts.reward

    def no_guard(key, state, actions):
        state, ts = path.core(path.pools[state.pool], state, actions)
        return state, ts.reward

    runs = {
        "envpool xla step": scan_loop(raw_step, handle, n, steps),
        "envpool send/recv, same n": same_run,
        "envpool send/recv, halves": halves_run,
        "envhub, no guard": scan_loop(no_guard, bare.init(jax.random.key(0))[0], n, steps),
        "envhub": scan_loop(envhub_step, guarded.init(jax.random.key(0))[0], n, steps),
    }
    for run in runs.values():
        run()  # compile
    medians = interleaved_medians(runs, args.repeats)
    base = medians["envpool xla step"]
    print(f"CartPole-v1, {n} envs x {steps} steps, median of {args.repeats} interleaved repeats")
    for name, seconds in medians.items():
        print(f"  {name:<24} {seconds / steps * 1e6:7.1f} us/step   {base / seconds:6.3f}x envpool's xla step")
    write_json([{"num_envs": n, "steps": steps, "us_per_step": {k: round(v / steps * 1e6, 2) for k, v in medians.items()},
                 "ratio_to_xla_step": {k: round(base / v, 3) for k, v in medians.items()}}], args.json)  # fmt: skip
    for env in (guarded, bare):
        env.close()
    for pool in (sync, same_pool, halves_pool):
        pool.close()


if __name__ == "__main__":
    main()
