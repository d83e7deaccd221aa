"""envhub's jaxmarl backend vs jaxmarl's own loop: random actions per agent, jitted lax.scan, batched with vmap.

The raw loop is what jaxmarl's baselines train with: ``jax.vmap`` of jaxmarl's ``env.step`` (its auto-reset:
``step_env``, then a ``reset`` for every env on every step, kept where the episode ended) and ``lax.scan``.
envhub runs with its defaults: same-step resets of only what ended (spare initial states, made ``num_envs``
at a time, envhub.native.resets), the final observation kept in ``final_obs``, episode ends split into
terminated and truncated. Both loops do the same work per step: split the key, draw a random action per
agent and env, step every env, add up every agent's reward and the episode ends.

    python benchmarks/jaxmarl_envs.py [--envs MPE_simple_spread_v3,SMAX] [--num-envs 1024]
        [--steps 200] [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import importlib.metadata

import jax
import jaxmarl
from _timing import comparison_cli

import envhub


def random_actions(key, agents, sizes, num_envs):
    keys = jax.random.split(key, len(agents))
    return {a: jax.random.randint(k, (num_envs,), 0, sizes[a]) for a, k in zip(agents, keys)}


def raw_jaxmarl_rollout(name: str, num_envs: int, steps: int):
    return marl_rollout(jaxmarl.make(name), num_envs, steps)


def marl_rollout(env, num_envs: int, steps: int):
    """A jitted-ready ``run(key) -> (total reward, episode ends)`` of any JaxMARL ``MultiAgentEnv``, vmapped over
    ``num_envs``, random actions (also used by ``jaxmarl_export.py`` on envhub's export)."""
    sizes = {a: env.action_space(a).n for a in env.agents}
    reset, step = jax.vmap(env.reset), jax.vmap(env.step)

    def run(key):
        init_key, key = jax.random.split(key)
        _, state = reset(jax.random.split(init_key, num_envs))

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            actions = random_actions(action_key, env.agents, sizes, num_envs)
            _, state, rewards, dones, _ = step(jax.random.split(step_key, num_envs), state, actions)
            reward = sum(rewards[a].sum() for a in env.agents)
            return (state, total + reward, ends + dones["__all__"].sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def envhub_rollout(name: str, num_envs: int, steps: int):
    env = envhub.make(f"jaxmarl/{name}", num_envs=num_envs)
    sizes = {a: env.single_action_space[a].n for a in env.agents}

    def run(key):
        init_key, key = jax.random.split(key)
        state, _ = env.init(init_key)

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            state, ts = env.step(step_key, state, random_actions(action_key, env.agents, sizes, num_envs))
            reward = sum(ts.reward[a].sum() for a in env.agents)
            return (state, total + reward, ends + ts.done.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def main() -> None:
    comparison_cli(
        __doc__,
        "jaxmarl",
        ("envs", "MPE_simple_spread_v3,SMAX"),
        raw_jaxmarl_rollout,
        envhub_rollout,
        lambda a: (
            f"{a.num_envs} envs, {a.steps} scan steps, random actions, median of {a.repeats} interleaved "
            f"repeats (jax {jax.__version__}, jaxmarl {importlib.metadata.version('jaxmarl')}, {jax.devices()[0].platform})"
        ),
    )


if __name__ == "__main__":
    main()
