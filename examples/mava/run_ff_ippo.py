"""Mava's Anakin IPPO (``ff_ippo``) on envhub envs through ``envhub.interop.to_jumanji``, only the make line changed.

Mava (github instadeepai/Mava, develop at 57c8e64, 2024-10-21: the newest snapshot this was tried on) builds its envs
in ``mava/utils/make_env.py``: ``make_jaxmarl_env`` (SMAX, MaBrax) makes each of the train and the eval env as
``_jaxmarl_registry[config.env.env_name](jaxmarl.make(env_name, **kwargs), add_global_state)`` (Mava's
``SmaxWrapper``); ``make_jumanji_env`` (LBF, RWARE, Cleaner, Connector) as ``jumanji.make(env_name,
generator=generator, **env_config)`` and then Mava's per-env wrapper (``LbfWrapper`` ...); both then apply
``add_extra_wrappers`` (``AgentIDWrapper``, Mava's ``AutoResetWrapper`` and ``RecordEpisodeMetrics``). This script
reads ``make_env.py``, replaces the two make lines of ``--suite``'s maker (refusing to run unless each is found
exactly once), and runs Mava's own ``ff_ippo.py`` as a script on Mava's own hydra config. Mava's files are not
edited. ``--maker``:

- ``mava``: the shipped lines.
- ``envhub``: ``to_jumanji(envhub.make(f"jaxmarl/{env_name}", **kwargs), add_global_state=add_global_state)``
  (``--suite jaxmarl``; the same change as a patch: ``make_env_envhub.patch`` beside this file), or
  ``to_jumanji(envhub.make(f"jumanji/{env_name}", generator=generator, **env_config))`` (``--suite jumanji``, before
  Mava's ``LbfWrapper``).
- ``envhub-specs``: the ``envhub`` line inside ``SpecMethods``: Mava at 57c8e64 predates its jumanji 1.0 update (Mava
  PR #1134, 2024-11) and calls ``env.observation_spec()``/``env.action_spec()`` as methods, while jumanji >= 1.0 envs
  (the export, jumanji 1.1.2's own) have them as properties: ``TypeError: 'MultiDiscreteArray' object is not
  callable``. ``SpecMethods`` gives the methods back (nothing else).
- ``mava-specs`` (``--suite jumanji``): the shipped jumanji line inside ``SpecMethods``: Mava's own jumanji path fails
  on jumanji 1.1.2 the same way.
- ``envhub-attrs`` (``--suite jumanji``): ``envhub-specs`` plus ``num_agents`` and ``time_limit``, which Mava's
  jumanji wrappers read from the raw env; the single-agent export of ``jumanji/LevelBasedForaging-v0`` lacked both
  when these runs were made and has ``time_limit`` since (a jumanji env's attribute), ``num_agents`` still not (envhub's
  LBF is single-agent: one joint action).

Two import-time stand-ins, because Mava's requirements name git builds the package index does not have:
``gigastep`` (``make_env`` imports ``ScenarioBuilder`` at module level; the index's gigastep 0.0.1 is an empty
placeholder) gets a module with empty classes, and ``jumanji...connector.MaConnector`` (only in Mava's jumanji fork,
a type annotation) is aliased to jumanji 1.1.2's ``Connector``. Neither is reached on the SMAX or LBF path.

Install (a side venv: Mava pins jax 0.4.30 and a jumanji fork; it runs on envhub's jax 0.10.2 and jumanji 1.1.2)::

    git clone https://github.com/instadeepai/Mava /tmp/mava/src && git -C /tmp/mava/src checkout 57c8e64
    uv venv -p python3.11 /tmp/mava/venv
    uv pip install -p /tmp/mava/venv/bin/python "jax==0.10.2" "jaxlib==0.10.2" flax optax chex distrax \\
        tensorflow-probability "hydra-core==1.3.2" omegaconf colorama rich tqdm "jumanji==1.1.2" "jaxmarl==0.2.0" \\
        matrax neptune tensorboard-logger gigastep orbax-checkpoint brax pandas type_enforced \\
        -e /path/to/envhub -e /path/to/envhub/plugins/envhub-jaxmarl -e /path/to/envhub/plugins/envhub-jumanji
    uv pip install -p /tmp/mava/venv/bin/python "protobuf~=3.20.0"  # Mava's pin: tensorboard_logger's old pb2 code
    uv pip install -p /tmp/mava/venv/bin/python --no-deps "id-marl-eval==0.0.4"  # its pandas==1.4.4 has no 3.11 build

(resolved: flax 0.12.8, optax 0.2.8, chex 0.1.92, distrax 0.1.9, tensorflow-probability 0.25.0, numpy 2.4.6,
neptune 1.14.0.post2; Mava imports neptune, marl_eval and tensorboard_logger at module level, its loggers stay off.)

Run (from Mava's source root: its hydra config searches ``mava/configs`` relative to the working directory); the
figures in ``examples/runs/mava_ff_ippo/metrics.json`` come from these, ``--maker mava`` and ``--maker envhub-specs``
(SMAX), ``--maker mava-specs`` and ``--maker envhub-attrs`` (LBF)::

    cd /tmp/mava/src && JAX_PLATFORMS=cpu PYTHONPATH=. /tmp/mava/venv/bin/python \\
        /path/to/envhub/examples/mava/run_ff_ippo.py --suite jaxmarl --maker envhub-specs --out run.json -- \\
        env=smax env.scenario.task_name=3m env.log_win_rate=False env.eval_metric=episode_return \\
        system.seed=42 system.total_timesteps=3e5 system.rollout_length=64 arch.num_evaluation=10 \\
        arch.num_eval_episodes=32 arch.absolute_metric=False
    ... --suite jumanji --maker envhub-attrs --out run.json -- env=lbf system.seed=42 system.total_timesteps=1e6 \\
        system.rollout_length=64 arch.num_evaluation=10 arch.num_eval_episodes=32 arch.absolute_metric=False

``env.log_win_rate=False env.eval_metric=episode_return``: how the recorded runs were made (both makers), when the
export lacked the ``timestep.extras["won_episode"]`` that Mava's evaluator reads with smax.yaml's default
``log_win_rate=True`` (``KeyError: 'won_episode'``). The export has it since (envhub-jaxmarl's SMAX
``info["won_episode"]``, at the top of ``extras`` as Mava's ``SmaxWrapper`` puts it), so smax.yaml's defaults
(``log_win_rate=True``, ``eval_metric=win_rate``) run unchanged: the first command above without those two overrides,
with ``system.total_timesteps=1e5 arch.num_evaluation=3`` (2026-11-29, not the recorded config, which was not rerun),
ran in 75 s (the whole process, on 2 shared CPU cores) and logged Mava's win rate 0.0, 6.25 and 9.375 % at its three
evaluations. Any other JaxMARL id envhub maps trains through the changed line, one Mava 57c8e64 has no wrapper for
included (``env.env_name`` is then a label)::

    ... --suite jaxmarl --maker envhub-specs --out run.json -- env=smax env.env_name=MPE \\
        env.scenario.name=MPE_simple_spread_v3 '~env.kwargs.see_enemy_actions' '~env.kwargs.walls_cause_death' \\
        '~env.kwargs.attack_mode' env.log_win_rate=False env.eval_metric=episode_return system.seed=42 \\
        system.total_timesteps=1e6 system.rollout_length=64 arch.num_evaluation=10 arch.num_eval_episodes=32 \\
        arch.absolute_metric=False
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
import time
import types
from pathlib import Path
from typing import Any

#: Mava's make lines (``make_jaxmarl_env``, ``make_jumanji_env``): the shipped text, and the env each builds per maker.
SHIPPED = {
    "jaxmarl": (
        "    {name} = _jaxmarl_registry[config.env.env_name](\n"
        "        jaxmarl.make(env_name, **kwargs),\n"
        "        add_global_state,\n"
        "    )\n"
    ),
    "jumanji": "    {name} = jumanji.make(env_name, generator=generator, **env_config)\n",
}
BUILT = {
    "jaxmarl": 'to_jumanji(envhub.make(f"jaxmarl/{{env_name}}", **kwargs), add_global_state=add_global_state)',
    "jumanji": 'to_jumanji(envhub.make(f"jumanji/{{env_name}}", generator=generator, **env_config))',
}
SHIPPED_JUMANJI = "jumanji.make(env_name, generator=generator, **env_config)"
#: What the single-agent export of a jumanji env lacks that Mava's jumanji wrappers read (``--maker envhub-attrs``).
ATTRS = 'num_agents=generator.num_agents, time_limit=env_config["time_limit"]'
IMPORTS = "import envhub\nfrom envhub.interop import to_jumanji\n"
MAKERS = ("mava", "mava-specs", "envhub", "envhub-specs", "envhub-attrs")


def lines(suite: str, maker: str) -> list[tuple[str, str]]:
    """``(shipped, changed)`` for the train and the eval line of ``suite``'s maker under ``maker`` (module docstring)."""
    pairs = []
    for name in ("train_env", "eval_env"):
        shipped = SHIPPED[suite].format(name=name)
        if maker.startswith("mava"):
            if maker == "mava-specs":  # jumanji's own env, its specs called as Mava at 57c8e64 does
                shipped_env = SHIPPED_JUMANJI if suite == "jumanji" else None
                if shipped_env is None:
                    raise SystemExit(
                        "--maker mava-specs is for --suite jumanji (Mava's JaxMARL wrappers define methods)"
                    )
                changed = shipped.replace(shipped_env, f"SpecMethods({shipped_env})")
            else:
                changed = shipped
        else:
            env = BUILT[suite].format()
            if maker == "envhub-specs":
                env = f"SpecMethods({env})"
            elif maker == "envhub-attrs":
                if suite != "jumanji":
                    raise SystemExit("--maker envhub-attrs is for --suite jumanji (the multi-agent export has both)")
                env = f"SpecMethods({env}, {ATTRS})"
            changed = f"    {name} = {env}\n"
        pairs.append((shipped, changed))
    return pairs


def spec_methods_class() -> type:
    """``SpecMethods``: jumanji >= 1.0's spec properties as the methods Mava calls before its jumanji 1.0 update
    (Mava PR #1134); keyword arguments become attributes of the wrapper (``ATTRS``)."""
    from jumanji.wrappers import Wrapper

    class SpecMethods(Wrapper):  # type: ignore[misc]
        """``env.observation_spec()`` etc. (jumanji < 1.0, Mava's fork) over an env whose specs are properties."""

        def __init__(self, env: Any, **attrs: Any):
            super().__init__(env)
            self.__dict__.update(attrs)

        def observation_spec(self) -> Any:  # type: ignore[override]
            return self._env.observation_spec

        def action_spec(self) -> Any:  # type: ignore[override]
            return self._env.action_spec

        def reward_spec(self) -> Any:  # type: ignore[override]
            return self._env.reward_spec

        def discount_spec(self) -> Any:  # type: ignore[override]
            return self._env.discount_spec

    return SpecMethods


def stand_ins() -> None:
    """The two import-time stand-ins of the module docstring (nothing on the JaxMARL path reaches them)."""
    try:
        from gigastep import ScenarioBuilder  # noqa: F401
    except ImportError:
        gigastep = types.ModuleType("gigastep")
        gigastep.ScenarioBuilder = type("ScenarioBuilder", (), {})  # type: ignore[attr-defined]
        gigastep_env = types.ModuleType("gigastep.gigastep_env")
        gigastep_env.GigastepEnv = type("GigastepEnv", (), {})  # type: ignore[attr-defined]
        gigastep.gigastep_env = gigastep_env  # type: ignore[attr-defined]
        sys.modules.update({"gigastep": gigastep, "gigastep.gigastep_env": gigastep_env})
    import jumanji.environments.routing.connector as connector

    if not hasattr(connector, "MaConnector"):
        connector.MaConnector = connector.Connector  # type: ignore[attr-defined]


def change_make_env(pairs: list[tuple[str, str]]) -> None:
    """Replace ``mava.utils.make_env`` by its source with each shipped line of ``pairs`` replaced by its change."""
    import mava.utils
    import mava.utils.make_env as shipped

    source = Path(shipped.__file__).read_text()
    for old, new in pairs:
        if source.count(old) != 1:
            raise SystemExit(f"Mava's make_env.py does not contain this line exactly once: {old!r}")
        source = source.replace(old, new)
    module = types.ModuleType(shipped.__name__)
    module.__file__ = shipped.__file__
    module.SpecMethods = spec_methods_class()  # type: ignore[attr-defined]
    exec(compile(IMPORTS + source, shipped.__file__, "exec"), module.__dict__)
    sys.modules[shipped.__name__] = module
    mava.utils.make_env = module  # type: ignore[attr-defined]


def record(log: list[dict[str, Any]]) -> None:
    """Keep what Mava logs (means per event) beside its own console logging."""
    import numpy as np
    from mava.utils.logger import MavaLogger

    original = MavaLogger.log

    def log_and_keep(self: Any, metrics: dict, t: int, t_eval: int, event: Any) -> None:
        kept = {k: v for k, v in metrics.items()}
        original(self, metrics, t, t_eval, event)
        row: dict[str, Any] = {"event": event.value, "timestep": int(t), "eval_step": int(t_eval)}
        for name, value in kept.items():
            if name == "won_episode":
                row["win_rate"] = float(np.sum(value) / np.size(value) * 100)
            elif isinstance(value, dict):
                continue
            else:
                row[name] = float(np.mean(np.asarray(value)))
        row["wall_seconds"] = time.perf_counter() - START
        log.append(row)

    MavaLogger.log = log_and_keep  # type: ignore[method-assign]


START = time.perf_counter()


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maker", choices=MAKERS, required=True)
    parser.add_argument("--suite", choices=sorted(SHIPPED), default="jaxmarl", help="which of Mava's makers changes")
    parser.add_argument("--out", type=Path, required=True, help="where the run's figures go (JSON)")
    parser.add_argument("overrides", nargs="*", help="Mava's hydra overrides (after --)")
    args = parser.parse_args(argv)

    stand_ins()
    if args.maker != "mava":
        change_make_env(lines(args.suite, args.maker))
    log: list[dict[str, Any]] = []
    record(log)
    script = str(Path("mava/systems/ppo/anakin/ff_ippo.py").resolve())  # hydra finds its config beside the script
    sys.argv = [script, *args.overrides]
    started = time.perf_counter()
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:  # hydra exits after the run
        if exit_.code not in (None, 0):
            raise
    result = {
        "maker": args.maker,
        "suite": args.suite,
        "overrides": args.overrides,
        "wall_seconds": time.perf_counter() - started,
    }
    result["log"] = log
    args.out.write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
