"""envhub's factoriax backend vs factoriax's own loop: random actions, jitted lax.scan, batched with vmap.

The raw loop is what factoriax trains with: ``factoriax.make(id)`` (``auto_reset=True``: its
``AutoResetWrapper``, which builds a new world on every step for the scenarios that resample, MinerBootstrap
and EasyRocket, since ``lax.select`` evaluates both sides, and restores a cached copy for Rocket),
``jax.vmap`` of its ``step_env`` and ``lax.scan``. envhub runs ``envhub.make("factoriax/<id>", num_envs=N)``
with its defaults: same-step auto-reset from spare initial states (one batched reset per ``N`` episode ends),
the final observation kept in ``final_obs``. Both cut every episode at ``LIMIT`` steps (factoriax's
``params.max_timesteps``, envhub's ``max_episode_steps``), so the timed run holds resets (the scenarios'
own budgets are 300 to 8000 steps). Both loops do the same work per step: split the key, draw a uniformly
random action per env, step every env, add up the rewards and the episode ends.

    python benchmarks/factoriax_envs.py [--envs MinerBootstrap-v1,EasyRocket-v1,Rocket-v1] [--num-envs 1024]
        [--steps 200] [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import importlib.metadata

import jax
from _timing import comparison_cli, envhub_random_rollout, raw_random_rollout
from factoriax.engine.envs.registry import make as factoriax_make

import envhub

ENVS = "MinerBootstrap-v1,EasyRocket-v1,Rocket-v1"
#: Steps after which both loops end an episode.
LIMIT = 40


def raw_factoriax_rollout(name: str, num_envs: int, steps: int):
    env, params = factoriax_make(name)  # auto_reset=True: factoriax's AutoResetWrapper
    params = params.replace(max_timesteps=LIMIT)
    reset = jax.vmap(env.reset_env, in_axes=(0, None))
    step = jax.vmap(env.step_env, in_axes=(0, 0, 0, None))

    def step_all(key, state, action):
        _, state, reward, done, _ = step(jax.random.split(key, num_envs), state, action, params)
        return state, reward, done

    return raw_random_rollout(
        lambda keys: reset(keys, params)[1], step_all, num_envs, env.action_space(params).n, steps
    )


def envhub_rollout(name: str, num_envs: int, steps: int):
    return envhub_random_rollout(envhub.make(f"factoriax/{name}", num_envs=num_envs, max_episode_steps=LIMIT), steps)


def main() -> None:
    comparison_cli(
        __doc__,
        "factoriax",
        ("envs", ENVS),
        raw_factoriax_rollout,
        envhub_rollout,
        lambda a: (
            f"{a.num_envs} envs, {a.steps} scan steps, episodes of {LIMIT} steps, a random action each, median of "
            f"{a.repeats} interleaved repeats (jax {jax.__version__}, factoriax "
            f"{importlib.metadata.version('factoriax')}, {jax.devices()[0].platform})"
        ),
    )


if __name__ == "__main__":
    main()
