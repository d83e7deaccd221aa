"""Stoix's Sebulba PPO on an envhub env through ``envhub.interop.sebulba_factory``, only the factory line changed.

Stoix (github EdanToledo/Stoix) runs its Sebulba systems (``stoix/systems/ppo/sebulba/ff_ppo.py``) on host envs:
``run_experiment`` calls ``env_factory = environments.make_factory(config)`` (``stoix/utils/make_env.py``: an
``EnvPoolFactory`` or ``GymnasiumFactory``), and each actor thread, the evaluator and the learner's setup call
``env_factory(num_envs)`` for a stateful vector env of Stoa ``TimeStep``s. This script runs Stoix's own
``run_experiment`` on Stoix's own hydra config (``stoix/configs/default/sebulba/default_ff_ppo.yaml``). Stoix's
source is not edited. ``--factory``:

- ``envhub``: ``make_factory`` returns ``sebulba_factory(f"{config.env.env_name}/{config.env.scenario.name}",
  **config.env.kwargs)``, the one changed line (``envpool/CartPole-v1`` for Stoix's ``env=envpool/cartpole``). The
  kwargs matter: Stoix's Atari configs (``env=envpool/pong``, ``breakout``) set ``repeat_action_probability``,
  ``full_action_space``, ``max_episode_steps``, ``reward_clip``, ... there, which envpool's defaults do not match.
- ``stoix``: Stoix's ``make_factory`` as it ships: ``EnvPoolFactory`` (``envpool.make(..., env_type="gymnasium")`` in
  Stoix's ``EnvPoolToStoa``) for ``env=envpool/...``, ``GymnasiumFactory`` (``gymnasium.make_vec`` in ``VecGymToStoa``)
  for ``env=gymnasium/...``.

Two things besides the factory line, both done here at runtime:

- Stoix's ``run_experiment`` asserts ``isinstance(env_factory, EnvFactory)`` (its own ABC) right after the factory
  line; envhub's factory is no subclass. The docs say to drop that assert; not editing Stoix, this script registers
  envhub's ``SebulbaFactory`` as a virtual subclass (``EnvFactory.register``). ``--no-register`` leaves it out, to
  see the ``AssertionError``.
- Stoix 8fff19c's Sebulba code calls two JAX functions that jax 0.10 no longer has, whatever the factory:
  ``jax.device_put_sharded`` (each actor's rollout to the learners) and ``jax.tree_map`` (the evaluator). Where they
  are missing this script adds them to ``jax`` for the run (``device_put_sharded``: the shards stacked on a leading
  axis, placed over the devices as ``flax.jax_utils.replicate`` places arrays for ``pmap``; ``tree_map``:
  ``jax.tree.map``).

One CPU: actor, learner and evaluator on device 0 (``arch.actor.device_ids=[0] arch.learner.device_ids=[0]
arch.evaluator_device_id=0``), two actor threads (Stoix's default). Two CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=2``) run with ``arch.actor.device_ids=[1]
arch.learner.device_ids=[0,1] arch.evaluator_device_id=1``; a learner on one device of two
(``arch.learner.device_ids=[0]``) fails for either factory: flax 0.12.8's ``unreplicate`` keeps the leading axis of
a one-device ``pmap`` output when JAX has more devices, and the actors' first ``act_fn`` raises
``ScopeParamShapeError`` (kernel ``(1, 4, 256)`` for ``(4, 256)``; the learner then waits for rollouts forever).

Install (the side venv of ``run_ff_ppo.py``; see its docstring) plus envpool and envhub's envpool and gymnasium
plugins (installed so their entry points register; ``--no-deps``: envhub itself is already there, editable)::

    /tmp/stoix/venv/bin/uv pip install -p /tmp/stoix/venv/bin/python "envpool==1.2.5"
    /tmp/stoix/venv/bin/uv pip install -p /tmp/stoix/venv/bin/python --no-deps \\
        -e /path/to/envhub/plugins/envhub-envpool -e /path/to/envhub/plugins/envhub-gymnasium

Run (from Stoix's source root; ``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python`` as in ``run_ff_ppo.py``)::

    cd /tmp/stoix/src && JAX_PLATFORMS=cpu PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python PYTHONPATH=. \\
        /tmp/stoix/venv/bin/python /path/to/envhub/examples/stoix/run_sebulba_ppo.py --factory envhub \\
        --out run.json -- env=envpool/cartpole network=mlp arch.total_timesteps=3e5 arch.total_num_envs=16 \\
        arch.actor.device_ids=[0] arch.learner.device_ids=[0] arch.evaluator_device_id=0 \\
        arch.num_evaluation=10 arch.num_eval_episodes=32 system.rollout_length=32 system.num_minibatches=4

``--factory stoix`` for Stoix's own factory; ``env=gymnasium/cartpole`` for gymnasium's CartPole (envhub's
``gymnasium/CartPole-v1``). The run file (``--out``) has the evaluations, the actors' throughput and the wall time.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def jax_compat() -> list[str]:
    """Add the two JAX functions Stoix's Sebulba code calls where this jax lacks them; the names added."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    added = []
    if not hasattr(jax, "device_put_sharded"):

        def device_put_sharded(shards: list[Any], devices: list[Any]) -> Any:
            mesh = jax.sharding.Mesh(np.array(devices), ("shards",))
            return jax.device_put(jnp.stack(shards), jax.NamedSharding(mesh, jax.P("shards")))

        jax.device_put_sharded = device_put_sharded
        added.append("jax.device_put_sharded")
    if not hasattr(jax, "tree_map"):
        jax.tree_map = jax.tree.map
        added.append("jax.tree_map")
    return added


def envhub_make_factory(register: bool) -> Any:
    """Stoix's ``make_factory`` with the factory line changed to envhub's ``sebulba_factory``."""
    from envhub.interop import sebulba_factory

    if register:
        from stoix.utils.env_factory import EnvFactory

        from envhub.interop.sebulba import SebulbaFactory

        EnvFactory.register(SebulbaFactory)

    def make_factory(config: Any) -> Any:
        return sebulba_factory(f"{config.env.env_name}/{config.env.scenario.name}", **config.env.kwargs)

    return make_factory


def record_logs(events: list[dict[str, Any]]) -> None:
    """Keep each evaluation's mean return, the actors' episode returns and their throughput for the run file."""
    import numpy as np
    from stoix.utils.logger import LogEvent, StoixLogger

    log = StoixLogger.log
    kinds = {LogEvent.EVAL: "eval", LogEvent.ABSOLUTE: "absolute", LogEvent.ACT: "train", LogEvent.MISC: "misc"}

    def logging(self: Any, metrics: dict, t: int, t_eval: int, event: Any) -> None:
        row: dict[str, Any] = {
            "event": kinds.get(event, str(event)),
            "env_steps": int(t),
            "wall_s": time.perf_counter(),
        }
        if "episode_return" in metrics:
            row["mean_return"] = float(np.mean(metrics["episode_return"]))
        names = ("global_SPS", "local_SPS", "steps_per_second", "env_step_time", "inference_time", "learn_step_time")
        for name in names:
            if name in metrics:
                row[name] = float(np.mean(metrics[name]))
        if len(row) > 3:
            events.append(row)
        log(self, metrics, t, t_eval, event)

    StoixLogger.log = logging


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factory", choices=("envhub", "stoix"), default="envhub")
    parser.add_argument("--no-register", action="store_true", help="leave Stoix's isinstance(EnvFactory) assert be")
    parser.add_argument("--out", type=Path, help="write the run's figures here (JSON)")
    parser.add_argument("overrides", nargs="*", help="Stoix hydra overrides (after --)")
    args = parser.parse_args(argv)

    from stoix_config import compose, finish  # beside this script

    cfg = compose("sebulba", "default_ff_ppo.yaml", args.overrides)
    added = jax_compat()

    from stoix.utils import make_env

    if args.factory == "envhub":
        make_env.make_factory = envhub_make_factory(not args.no_register)
    from stoix.systems.ppo.sebulba.ff_ppo import run_experiment

    events: list[dict[str, Any]] = []
    record_logs(events)
    start = time.perf_counter()
    performance = run_experiment(cfg)
    wall = time.perf_counter() - start
    for event in events:
        event["wall_s"] = round(event["wall_s"] - start, 2)
    env_steps = max((e["env_steps"] for e in events if e["event"] != "eval"), default=0)  # the last logged count
    result = {
        "factory": args.factory,
        "env": f"{cfg.env.env_name}/{cfg.env.scenario.name}",
        "overrides": args.overrides,
        "seed": int(cfg.arch.seed),
        "jax_added": added,
        "final_performance": performance,
        "eval_returns": [e for e in events if e["event"] == "eval"],
        "train_returns": [e for e in events if e["event"] == "train"],
        "actor_throughput": [e for e in events if "global_SPS" in e],
        "learner": [e for e in events if "learn_step_time" in e],
        "env_steps": env_steps,
        "wall_s": round(wall, 2),
        "steps_per_s": round(env_steps / wall, 1),
    }
    return finish(result, args.out, ("factory", "env", "final_performance", "wall_s", "steps_per_s"))


if __name__ == "__main__":
    main()
