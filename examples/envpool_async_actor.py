"""An async actor loop on envpool: the policy runs on one batch while envpool steps the others.

``num_envs=16`` Pong-like CartPole environments answer ``batch_size=8`` at a time; ``recv`` returns
whichever 8 finished first (``ts.info["env_id"]`` names them) and ``send`` returns their actions.
The whole loop is one jitted ``lax.fori_loop``. Episodes auto-reset in the same step, as everywhere
in envhub: ``ts.final_obs`` is the terminal observation and ``ts.obs`` the next episode's first.

Run: ``python examples/envpool_async_actor.py``
"""

import time

import jax
import jax.numpy as jnp
import numpy as np
from envhub_envpool import AsyncEnvpool

W = jnp.asarray(np.random.default_rng(0).normal(size=(4, 2)), jnp.float32)


def policy(key, obs):
    return jax.random.categorical(key, obs @ W).astype(jnp.int32)


def main(num_envs=16, batch_size=8, num_batches=2000):
    with AsyncEnvpool("CartPole-v1", num_envs=num_envs, batch_size=batch_size) as pool:

        def actor_step(i, carry):
            handle, key, returns, episodes, counts = carry
            key, action_key = jax.random.split(key)
            handle, ts = pool.recv(handle)  # the next batch_size finished envs
            env_id = ts.info["env_id"]
            handle = pool.send(handle, policy(action_key, ts.obs), env_id)
            counts = counts.at[env_id].add(1)
            return handle, key, returns + ts.reward.sum(), episodes + ts.done.sum(), counts

        @jax.jit
        def run(handle, key):
            zeros = jnp.zeros(num_envs, jnp.int32)
            return jax.lax.fori_loop(0, num_batches, actor_step, (handle, key, 0.0, 0, zeros))

        handle = pool.init(jax.random.key(0))
        start = time.perf_counter()
        handle, _, total, episodes, counts = jax.block_until_ready(run(handle, jax.random.key(1)))
        seconds = time.perf_counter() - start
    print(f"{num_batches} batches of {batch_size} from {num_envs} envs in {seconds:.2f}s (incl. compile)")
    print(f"{int(episodes)} episodes, mean return {float(total) / max(int(episodes), 1):.1f}")
    print(f"steps per env: min {int(counts.min())}, max {int(counts.max())}")


if __name__ == "__main__":
    main()
