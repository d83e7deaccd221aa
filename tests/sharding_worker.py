"""Run in a subprocess by test_sharding.py: XLA_FLAGS and jax.distributed must be set before jax starts.

usage: python sharding_worker.py single DEVICES OUT.npz
       python sharding_worker.py multi PROCESS_ID PORT OUT.npz
       python sharding_worker.py host PROCESS_ID PORT OUT.npz   (a gymnasium pool per process)
Writes the sharded rollout's observations (the addressable shards) and output sharding specs.
"""

from __future__ import annotations

import os
import sys

NUM_ENVS, STEPS = int(os.environ.get("NUM_ENVS", 16)), 30


def main() -> None:
    mode = sys.argv[1]
    devices = int(sys.argv[2]) if mode == "single" else 4
    flags = os.environ.get("XLA_FLAGS", "")  # the test run's own flags (see conftest.py), kept
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={devices}".strip()
    import jax

    if mode in ("multi", "host"):
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(f"127.0.0.1:{sys.argv[3]}", num_processes=2, process_id=int(sys.argv[2]))
    import numpy as np

    if mode == "host":
        np.savez(sys.argv[-1], obs=host_rollout(jax.process_index()), process=jax.process_index())
        return
    from jax.sharding import Mesh

    import envhub

    mesh = Mesh(np.array(jax.devices()), ("envs",))
    env = envhub.make(env_id(), num_envs=NUM_ENVS, mesh=mesh, **env_kwargs())
    run = jax.jit(lambda key: rollout_obs(env, key), out_shardings=(env.over_time(), env.batch_sharding))
    obs, final_state_leaf = run(jax.random.key(0))
    uneven_error = ""
    try:
        envhub.make("gymnax/CartPole-v1", num_envs=12, mesh=mesh)
    except envhub.errors.InvalidArgumentError as exc:
        uneven_error = str(exc)
    shards = {f"rows_{s.index[1].start}_{s.index[1].stop}": np.asarray(s.data) for s in obs.addressable_shards}
    np.savez(
        sys.argv[-1],
        obs_spec=str(obs.sharding.spec),
        state_spec=str(final_state_leaf.sharding.spec),
        num_devices=jax.device_count(),
        uneven_error=uneven_error,
        **shards,
    )


def env_id():
    return os.environ.get("ENV_ID", "gymnax/CartPole-v1")


def env_kwargs():
    import json

    return json.loads(os.environ.get("ENV_KWARGS", "{}"))


def host_rollout(process_index):
    """This process's own gymnasium pool, seeded from its own key: the per-process host pattern."""
    import jax
    import numpy as np

    import envhub

    key = jax.random.fold_in(jax.random.key(0), process_index)  # = envhub.sharding.process_key in that process
    with envhub.make("gymnasium/CartPole-v1", num_envs=2) as env:
        obs = jax.jit(lambda k: rollout_obs(env, k)[0])(key)
        return np.asarray(obs)


def rollout_obs(env, key):
    import jax

    state, _ = env.init(key)

    def body(state, k):
        action_key, step_key = jax.random.split(k)
        state, ts = env.step(step_key, state, env.action_space.sample(action_key))
        return state, ts.obs

    state, obs = jax.lax.scan(body, state, jax.random.split(key, STEPS))
    return obs, jax.tree.leaves(state)[0]


if __name__ == "__main__":
    main()
