"""Run in subprocesses by test_sharding.py: XLA_FLAGS and jax.distributed must be set before jax starts.

usage: python sharding_worker.py single DEVICES OUT_DIR
       python sharding_worker.py pair PROCESS_ID PORT OUT_DIR   (run twice, process 0 and 1)
single writes one sharded rollout per entry of SINGLE_JOBS over DEVICES simulated devices (gymnax.npz,
brax.npz, jaxmarl.npz); pair joins one jax.distributed session of 2 processes with 4 devices each and writes
multiI.npz (this process's shards of one rollout over all 8 devices) and hostI.npz (a gymnasium pool
per process). A sharded rollout's file holds the addressable shards and the output sharding specs.
One process runs several jobs because starting one (jax, gymnax's imports, the distributed session)
costs as much as a job.
"""

from __future__ import annotations

import os
import sys

NUM_ENVS, STEPS = int(os.environ.get("NUM_ENVS", 16)), 30
SINGLE_JOBS = {
    "gymnax": ("gymnax/CartPole-v1", {}),
    # Episodes end inside the rollout: resets too. generalized is inverted_pendulum's default, named
    # because test_sharding's rounding note was measured with it (positional and spring compile no faster).
    "brax": ("brax/inverted_pendulum", {"backend": "generalized", "episode_length": 12}),
    # Multi-agent: observations, actions and rewards are dicts per agent; episodes end (and reset) every 5 steps.
    "jaxmarl": ("jaxmarl/MPE_simple_spread_v3", {"max_episode_steps": 5}),
}


def main() -> None:
    mode, out_dir = sys.argv[1], sys.argv[-1]
    devices = int(sys.argv[2]) if mode == "single" else 4
    flags = os.environ.get("XLA_FLAGS", "")  # the test run's own flags (see conftest.py), kept
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={devices}".strip()
    import jax

    if mode == "pair":
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(f"127.0.0.1:{sys.argv[3]}", num_processes=2, process_id=int(sys.argv[2]))
    import numpy as np

    if mode == "single":
        for name, (env_id, kwargs) in SINGLE_JOBS.items():
            np.savez(os.path.join(out_dir, f"{name}.npz"), **sharded_rollout(env_id, kwargs))
        return
    i = jax.process_index()
    np.savez(os.path.join(out_dir, f"multi{i}.npz"), **sharded_rollout(*SINGLE_JOBS["gymnax"]))
    np.savez(os.path.join(out_dir, f"host{i}.npz"), obs=host_rollout(i), process=i)


def sharded_rollout(env_id, kwargs):
    """The rollout sharded over a mesh of every device: this process's shards, the specs, and the uneven-batch error."""
    import jax
    import numpy as np
    from jax.sharding import Mesh

    import envhub

    mesh = Mesh(np.array(jax.devices()), ("envs",))
    env = envhub.make(env_id, num_envs=NUM_ENVS, mesh=mesh, **kwargs)
    run = jax.jit(lambda key: rollout_obs(env, key), out_shardings=(env.over_time(), env.batch_sharding))
    obs, final_state_leaf = run(jax.random.key(0))
    uneven_error = ""
    try:
        envhub.make("gymnax/CartPole-v1", num_envs=12, mesh=mesh)
    except envhub.errors.InvalidArgumentError as exc:
        uneven_error = str(exc)
    shards = {f"rows_{s.index[1].start}_{s.index[1].stop}": np.asarray(s.data) for s in obs.addressable_shards}
    return dict(
        obs_spec=str(obs.sharding.spec),
        state_spec=str(final_state_leaf.sharding.spec),
        num_devices=jax.device_count(),
        uneven_error=uneven_error,
        **shards,
    )


def host_rollout(process_index):
    """This process's own gymnasium pool, seeded from its own key: the per-process host pattern."""
    import jax
    import numpy as np

    import envhub

    key = jax.random.fold_in(jax.random.key(0), process_index)  # = envhub.wrappers.sharding.process_key in that process
    with envhub.make("gymnasium/CartPole-v1", num_envs=2) as env:
        obs = jax.jit(lambda k: rollout_obs(env, k)[0])(key)
        return np.asarray(obs)


def rollout_obs(env, key):
    import jax

    state, _ = env.init(key)

    def body(state, k):
        action_key, step_key = jax.random.split(k)
        state, ts = env.step(step_key, state, env.action_space.sample(action_key))
        return state, jax.tree.leaves(ts.obs)[0]  # the observation; a multi-agent env's first agent's

    state, obs = jax.lax.scan(body, state, jax.random.split(key, STEPS))
    return obs, jax.tree.leaves(state)[0]


if __name__ == "__main__":
    main()
    if sys.argv[1] == "single":  # skip the teardown that frees brax's and jaxmarl's objects (~2 s); a pair
        os._exit(0)  # worker ends as usual, so that jax.distributed shuts down in step with the other process
