"""Peak memory (RSS) of a jitted 1024-env CartPole rollout: envhub vs gymnax directly.

Each variant runs in its own interpreter, which reports its peak RSS (``ru_maxrss``) after the
rollout; the baseline interpreter (jax and gymnax imported, nothing run) is reported too.

    python benchmarks/memory.py [--num-envs 1024] [--steps 1000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

PROGRAM = """
import resource, sys, jax, gymnax, envhub
variant, num_envs, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
key = jax.random.key(0)
if variant == "envhub":
    env = envhub.make("gymnax/CartPole-v1", num_envs=num_envs)
    def run(key):
        state, _ = env.init(key)
        def body(state, k):
            a, s = jax.random.split(k)
            state, ts = env.step(s, state, env.action_space.sample(a))
            return state, ts.reward.sum()
        return jax.lax.scan(body, state, jax.random.split(key, steps))[1].sum()
    jax.block_until_ready(jax.jit(run)(key))
elif variant == "gymnax (raw)":
    env, params = gymnax.make("CartPole-v1")
    def run(key):
        _, state = jax.vmap(env.reset, (0, None))(jax.random.split(key, num_envs), params)
        def body(state, k):
            a, s = jax.random.split(k)
            actions = jax.random.randint(a, (num_envs,), 0, 2)
            _, state, r, *_ = jax.vmap(env.step, (0, 0, 0, None))(jax.random.split(s, num_envs), state, actions, params)
            return state, r.sum()
        return jax.lax.scan(body, state, jax.random.split(key, steps))[1].sum()
    jax.block_until_ready(jax.jit(run)(key))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    peaks = {}
    for variant in ("baseline (imports only)", "gymnax (raw)", "envhub"):
        out = subprocess.run(
            [sys.executable, "-c", PROGRAM, variant, str(args.num_envs), str(args.steps)],
            capture_output=True,
            text=True,
            check=True,
        )
        peaks[variant] = float(out.stdout.split()[-1])
        print(f"  {variant:<24} peak RSS {peaks[variant]:8.1f} MiB")
    print(f"envhub / raw peak RSS: {peaks['envhub'] / peaks['gymnax (raw)']:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: round(v, 1) for k, v in peaks.items()}, f, indent=2)


if __name__ == "__main__":
    main()
