"""Steps/s of ``envhub.interop.to_gymnasium`` in a Python loop, against gymnasium's own CartPole.

Four loops, interleaved (a busy machine slows them alike), each ``env.step`` then ``env.reset``
at an episode end, with alternating actions:

- ``gymnasium``: ``gymnasium.make("CartPole-v1")`` (the baseline).
- ``export gymnasium``: ``to_gymnasium(envhub.make("gymnasium/CartPole-v1"))`` (steps gymnasium directly).
- ``export gymnax``: ``to_gymnasium(envhub.make("gymnax/CartPole-v1"))`` (one compiled call per step).
- ``one jit call``: the floor of any export that runs one compiled call per step: a jitted function
  of the same argument and result sizes as the gymnax export's that does no work, fetched to NumPy.
- ``naive gymnax``: what the export did before issue 22: ``jax.jit(env.step)`` with a key split in
  Python and every TimeStep leaf fetched on its own.

Run: ``python benchmarks/gymnasium_export.py [--steps 3000] [--repeats 7]``.
"""

from __future__ import annotations

import argparse

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
from _timing import interleaved_medians

import envhub
from envhub import interop


class Naive:
    """The pre-issue-22 export's step: a jitted env.step, the key split outside, leaves fetched one by one."""

    def __init__(self, env: envhub.Environment) -> None:
        self.env, self.key = env, jax.random.key(0)
        self._init, self._step = jax.jit(env.init), jax.jit(env.step)

    def reset(self, seed: int | None = None) -> None:
        self.key, sub = jax.random.split(self.key)
        self.state, _ = self._init(sub)

    def step(self, action: int) -> tuple:
        self.key, sub = jax.random.split(self.key)
        self.state, ts = self._step(sub, self.state, action)
        obs = jax.tree.map(np.asarray, ts.final_obs)
        return obs, float(ts.reward), bool(ts.terminated), bool(ts.truncated), jax.tree.map(np.asarray, ts.info)


class OneJitCall:
    """A step that is one jitted call doing nothing (8-word carry in and out, 12 words fetched)."""

    def __init__(self) -> None:
        self._call = jax.jit(lambda carry, action: (carry + 1, jnp.concatenate([carry, carry[:4]])))
        self.carry = jnp.zeros(8, jnp.uint32)

    def reset(self, seed: int | None = None) -> None:
        self.carry = jnp.zeros(8, jnp.uint32)

    def step(self, action: int) -> tuple:
        self.carry, out = self._call(self.carry, np.asarray(action, np.int64))
        host = np.array(out)
        return host[:4], float(host[4]), bool(host[5] > 9), bool(host[6] > 9), {}


def loop(env: object, steps: int) -> None:
    env.reset(seed=0)
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(i % 2)
        if terminated or truncated:
            env.reset()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    envs = {
        "gymnasium": gymnasium.make("CartPole-v1"),
        "export gymnasium": interop.to_gymnasium(envhub.make("gymnasium/CartPole-v1")),
        "export gymnax": interop.to_gymnasium(envhub.make("gymnax/CartPole-v1")),
        "naive gymnax": Naive(envhub.make("gymnax/CartPole-v1")),
        "one jit call": OneJitCall(),
    }
    for env in envs.values():
        loop(env, 50)  # compile
    medians = interleaved_medians(
        {name: (lambda e=env: loop(e, args.steps)) for name, env in envs.items()}, args.repeats
    )
    rate = {name: args.steps / seconds for name, seconds in medians.items()}
    print(f"{'loop':<18} {'steps/s':>10} {'vs gymnasium':>13}")
    for name, r in rate.items():
        print(f"{name:<18} {r:>10,.0f} {r / rate['gymnasium']:>13.2f}")
    print(f"export gymnax vs naive gymnax: {rate['export gymnax'] / rate['naive gymnax']:.2f}x")
    print(f"export gymnax vs one jit call (the floor): {rate['export gymnax'] / rate['one jit call']:.2f}x")


if __name__ == "__main__":
    main()
