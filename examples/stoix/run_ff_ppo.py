"""Stoix's Anakin PPO on an envhub env through ``envhub.interop.to_stoa``, only the make line changed.

Stoix (github EdanToledo/Stoix) builds its JAX envs in ``stoix/utils/make_env.py``: one maker per suite
(``make_gymnax_env``, ``make_brax_env``), each ``<adapter>(<library>.make(...))`` for the train and the eval env, then
``NoExtrasWrapper``, the config's optional wrappers and the Anakin stack (``AddRNGKey``, ``RecordEpisodeMetrics``,
``AutoResetWrapper(next_obs_in_extras=True)``, ``VmapWrapper``). This script registers a maker for the suite that is
that same function with the make line changed, then runs Stoix's own ``run_experiment`` (``ff_ppo`` or
``ff_ppo_continuous``) on Stoix's own hydra config. Stoix's source is not edited. ``--maker``:

- ``envhub``: ``to_stoa(envhub.make("<suite>/<scenario>", **env.kwargs))``, the one changed line.
- ``stoix``: Stoix's maker as it ships (``GymnaxToStoa(gymnax.make(...))``, ``BraxToStoa(brax.envs.create(...))``).
  On gymnax >= 1.0 it fails: Stoa 0.1.2's (and Stoa main's) ``GymnaxToStoa`` unpacks gymnax's old 5-value step.
- ``stoix-legacy``: Stoix's gymnax maker with ``gymnax.wrappers.LegacyStepAPIWrapper`` around the env (the 5-value
  step, truncation folded into ``done``): what Stoix's gymnax path ran before gymnax 1.0.

Install (a side venv: Stoix is not on the package index and pins ``jax<0.6``; it runs on envhub's jax 0.10.2)::

    git clone https://github.com/EdanToledo/Stoix /tmp/stoix/src            # commit 8fff19c tested
    python3.11 -m venv /tmp/stoix/venv && /tmp/stoix/venv/bin/python -m pip install uv
    /tmp/stoix/venv/bin/uv pip install -p /tmp/stoix/venv/bin/python "jax==0.10.2" "jaxlib==0.10.2" \\
        "flax==0.12.8" "optax==0.2.8" "chex==0.1.92" "distrax==0.1.9" "gymnax==1.0.1" "brax==0.14.2" \\
        tensorflow-probability rlax hydra-core omegaconf colorama dm-tree pandas rich orbax-checkpoint flashbax \\
        gymnasium tensorboard-logger neptune wandb absl-py tqdm stoa-env==0.1.2 -e "/path/to/envhub[gymnax,brax]"

Run (from Stoix's source root: its hydra config searches ``stoix/configs`` relative to the working directory;
``PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python``: Stoix's logger imports ``tensorboard_logger``, whose generated
protobuf code the protobuf that wandb/orbax need refuses otherwise)::

    cd /tmp/stoix/src && JAX_PLATFORMS=cpu PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python PYTHONPATH=. \\
        /tmp/stoix/venv/bin/python /path/to/envhub/examples/stoix/run_ff_ppo.py --maker envhub --out run.json -- \\
        arch.total_timesteps=2e5 arch.total_num_envs=16 arch.num_evaluation=10 arch.num_eval_episodes=32

Brax (continuous PPO): ``--system ff_ppo_continuous -- env=brax/hopper env.scenario.name=inverted_pendulum ...``.
Stoix's continuous systems read ``float(env.action_space().minimum)`` (and ``.maximum``): one bound for every action
dimension, as Stoa's brax adapter gives; ``to_stoa`` gives a bound that is the same everywhere as one value (since
envhub ca85685; before, per-dimension bounds, which ``float`` refused).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Callable

SYSTEMS = {"ff_ppo": "default_ff_ppo.yaml", "ff_ppo_continuous": "default_ff_ppo_continuous.yaml"}


def envhub_build(suite: str) -> Callable[[str, Any], Any]:
    """The changed make line: the envhub env of ``<suite>/<scenario>`` as a Stoa env."""
    import envhub
    from envhub.interop import to_stoa

    def build(scenario: str, config: Any) -> Any:
        return to_stoa(envhub.make(f"{suite}/{scenario}", **dict(config.env.kwargs)))

    return build


def legacy_gymnax_build(scenario: str, config: Any) -> Any:
    """Stoix's gymnax make line with gymnax's 5-value step (``LegacyStepAPIWrapper``), which Stoa's adapter unpacks."""
    import copy

    import gymnax
    from gymnax.wrappers import LegacyStepAPIWrapper
    from stoa.env_adapters.gymnax import GymnaxToStoa
    from stoix.utils.make_env import _create_gymnax_env_instance

    def legacy_make(name: str, **kwargs: Any) -> Any:
        env, params = gymnax.make(name, **kwargs)
        return LegacyStepAPIWrapper(env), params

    env, params = _create_gymnax_env_instance(scenario, dict(copy.deepcopy(config.env.kwargs)), legacy_make)
    return GymnaxToStoa(env, params)


def suite_maker(build: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    """Stoix's ``make_gymnax_env``/``make_brax_env`` with ``build`` as the make line (the rest as in Stoix)."""
    from stoa.utility_wrappers.extras_transforms import NoExtrasWrapper
    from stoix.utils import make_env

    def make_suite_env(scenario: str, config: Any) -> Any:
        env, eval_env = NoExtrasWrapper(build(scenario, config)), NoExtrasWrapper(build(scenario, config))
        env, eval_env = make_env.apply_optional_wrappers((env, eval_env), config)
        return make_env.apply_core_wrappers(env, config), eval_env

    return make_suite_env


def record_evaluations(events: list[dict[str, Any]]) -> None:
    """Keep each evaluation's mean episode return (Stoix's logger prints them; this keeps them for the run file)."""
    import numpy as np
    from stoix.utils.logger import LogEvent, StoixLogger

    log = StoixLogger.log

    def logging(self: Any, metrics: dict, t: int, t_eval: int, event: Any) -> None:
        if event in (LogEvent.EVAL, LogEvent.ABSOLUTE, LogEvent.ACT) and "episode_return" in metrics:
            kind = {LogEvent.EVAL: "eval", LogEvent.ABSOLUTE: "absolute", LogEvent.ACT: "train"}[event]
            row = {"event": kind, "env_steps": int(t), "mean_return": float(np.mean(metrics["episode_return"]))}
            events.append({**row, "wall_s": time.perf_counter()})
        log(self, metrics, t, t_eval, event)

    StoixLogger.log = logging


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maker", choices=("envhub", "stoix", "stoix-legacy"), default="envhub")
    parser.add_argument("--system", choices=sorted(SYSTEMS), default="ff_ppo")
    parser.add_argument("--out", type=Path, help="write the run's figures here (JSON)")
    parser.add_argument("overrides", nargs="*", help="Stoix hydra overrides (after --)")
    args = parser.parse_args(argv)

    from stoix.utils import make_env
    from stoix_config import compose, finish  # beside this script

    cfg = compose("anakin", SYSTEMS[args.system], args.overrides)
    suite = cfg.env.env_name
    if args.maker == "envhub":
        make_env.ENV_MAKERS[suite] = suite_maker(envhub_build(suite))
    elif args.maker == "stoix-legacy":
        make_env.ENV_MAKERS[suite] = suite_maker(legacy_gymnax_build)

    if args.system == "ff_ppo":
        from stoix.systems.ppo.anakin.ff_ppo import run_experiment
    else:
        from stoix.systems.ppo.anakin.ff_ppo_continuous import run_experiment
    events: list[dict[str, Any]] = []
    record_evaluations(events)
    start = time.perf_counter()
    performance = run_experiment(cfg)
    wall = time.perf_counter() - start
    for event in events:
        event["wall_s"] = round(event["wall_s"] - start, 2)
    result = {
        "maker": args.maker,
        "system": args.system,
        "env": f"{suite}/{cfg.env.scenario.name}",
        "overrides": args.overrides,
        "seed": int(cfg.arch.seed),
        "final_performance": performance,
        "eval_returns": [e for e in events if e["event"] == "eval"],
        "absolute_return": next((e["mean_return"] for e in events if e["event"] == "absolute"), None),
        "train_returns": [e for e in events if e["event"] == "train"],
        "wall_s": round(wall, 2),
    }
    return finish(result, args.out, ("maker", "env", "final_performance", "absolute_return", "wall_s"))


if __name__ == "__main__":
    main()
