"""Quick start: 1024 CartPole environments, random actions, one jitted lax.scan."""

import time

import jax

import envhub

NUM_ENVS, STEPS = 1024, 500
env = envhub.make("gymnax/CartPole-v1", num_envs=NUM_ENVS)


@jax.jit
def rollout(key):
    def step(state, key):
        action_key, step_key = jax.random.split(key)
        state, ts = env.step(step_key, state, env.action_space.sample(action_key))
        return state, (ts.reward, ts.terminated, ts.truncated)

    state, ts = env.init(key)
    _, (rewards, terminated, truncated) = jax.lax.scan(step, state, jax.random.split(key, STEPS))
    return rewards.sum(), terminated.sum(), truncated.sum()


jax.block_until_ready(rollout(jax.random.key(0)))  # compile once
start = time.perf_counter()
reward, terminated, truncated = jax.block_until_ready(rollout(jax.random.key(1)))
seconds = time.perf_counter() - start
print(f"{env.id} x{NUM_ENVS}: {STEPS} steps in {seconds * 1e3:.0f} ms = {NUM_ENVS * STEPS / seconds:,.0f} env steps/s")
print(f"episodes ended: {int(terminated)} terminated, {int(truncated)} truncated; total reward {float(reward):,.0f}")
