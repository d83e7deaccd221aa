"""The one contract of every export (docs/interop.md): what it takes, how it refuses, who owns what.

An export module declares its ``TARGET`` and its entry point starts with ``TARGET.check(env, **flags)``: every
bad env or flag is refused there, before anything is built (the env stays usable), with the same words in every
export; a flag of one name has one rule everywhere (``FLAGS``). The policies, applied by every export:

- **final_obs**: a target that may bootstrap from the observation an episode reached (``Target.reached``: where it
  reports it) refuses an env that drops ``final_obs`` (``DropFinalObs``, ``IgnoreTruncation(drop_final_obs=True)``),
  naming the wrapper; a target whose contract has no such observation (JaxMARL) takes it.
- **close()**: an env belongs to whoever made it. An export's ``close()`` closes what the export made (its env
  where ``register_gymnasium``'s makers built it, the gymnasium env it steps directly), never an env it was given,
  so it keeps working after its ``close()`` (TorchRL's collectors close and reuse their envs). Once the env is
  closed, every export refuses every call with ``ClosedEnvironmentError``.
- **pickling**: an export pickles as its export call (``Made``), its env as envs pickle (by id, as ``envhub.make``
  built it), and is rebuilt where it is loaded: no running episode travels (reset it there). An env ``envhub.make``
  did not build raises ``PicklingUnsupportedError`` saying so.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any

import jax

from envhub.core.arguments import an_environment, single_agent_only
from envhub.errors import ClosedEnvironmentError, InvalidArgumentError, MissingDependencyError
from envhub.interop.flags import FLAGS
from envhub.registry.plugin_api import compatible_core_range
from envhub.wrappers import DropFinalObs, Wrapper

#: The agents a target takes: one, several of either kind, several acting at once, one player to move at a time.
AGENTS = ("single", "multi", "simultaneous", "turn-based")
TURN_KEYS = {"observation", "legal_action_mask", "current_player"}  # a turn-based game's observation (multi-agent.md)
KINDS = {
    "single": "single-agent (env.agents is empty)",
    "simultaneous": "simultaneous (observations keyed by env.agents)",
    "turn-based": "turn-based (one observation, the player to move's)",
    "multi": "multi-agent, but neither simultaneous nor turn-based",
}


@dataclasses.dataclass(frozen=True)
class Made:
    """An export call that passed its checks, ``to_X(env, **flags)``: what the export is rebuilt from when unpickled.

    ``owned``: the export made ``env`` itself (``register_gymnasium``'s makers), so its ``close()`` closes it.
    """

    export: str
    env: Any
    flags: dict[str, Any]
    owned: bool = False


@dataclasses.dataclass(frozen=True)
class Target:
    """What one export takes, and the fix its refusals name (``fixes``, keyed by what is refused: ``"batched"``,
    ``"unbatched"``, ``"multi-agent"``, ``"single-agent"``, ``"host"``; each is appended to the rule's words)."""

    export: str
    library: str
    batched: bool | None = False  # True: made with num_envs=N; False: without; None: either
    agents: str = "single"  # one of AGENTS
    jax_native: bool = False
    reached: str = ""  # where the export reports the observation an episode reached; "": the target never bootstraps
    fixes: Mapping[str, str] = dataclasses.field(default_factory=dict)

    def check(self, env: Any, **flags: Any) -> Made:
        """``Made(export, env, flags)`` once ``env`` fits and each flag passes its rule (``FLAGS``; other flags come
        parsed by the export's own library rule).

        Raises:
            InvalidArgumentError: ``env`` is no envhub env, or does not fit; a flag breaks its rule.
            ClosedEnvironmentError: ``env`` is closed.
        """
        an_environment(self.export, env)
        if env.closed:
            raise ClosedEnvironmentError(env.id, self.export)
        checked = {k: FLAGS[k](self.export, env, v) if k in FLAGS else v for k, v in flags.items()}
        if self.agents == "single":
            single_agent_only(self.export, env, self.fixes.get("multi-agent", "export it another way"))
        problem = self._batch_problem(env) or self._agents_problem(env) or self._host_problem(env)
        dropper = dropping_wrapper(env) if self.reached else None
        if problem is None and dropper is not None:
            problem = self._dropped(env.id, dropper)
        if problem is not None:
            raise InvalidArgumentError(problem)
        return Made(self.export, env, checked)

    def _batch_problem(self, env: Any) -> str | None:
        if self.batched and env.num_envs is None:
            return (
                f"{self.export} needs a batched env; make {env.id!r} with num_envs=N{self.fixes.get('unbatched', '')}."
            )
        if self.batched is False and env.num_envs is not None:
            return (
                f"{self.export} needs an unbatched env; {env.id!r} has num_envs={env.num_envs}: make it without "
                f"num_envs{self.fixes.get('batched', '')}."
            )
        return None

    def _agents_problem(self, env: Any) -> str | None:
        kind = agents_kind(env)
        if self.agents == "single" or kind == self.agents or (self.agents == "multi" and kind != "single"):
            return None
        need = {"multi": "multi-agent", "simultaneous": "simultaneous multi-agent (observations keyed by env.agents)"}
        need["turn-based"] = "turn-based multi-agent (obs with current_player and legal_action_mask)"
        fix = self.fixes.get("single-agent" if kind == "single" else "multi-agent", "")
        return f"{self.export} needs a {need[self.agents]} env; {env.id!r} is {KINDS[kind]}{fix} (docs/multi-agent.md)."

    def _host_problem(self, env: Any) -> str | None:
        if not self.jax_native or env.is_jax_native:
            return None
        return f"{self.export} needs a JAX-native env; {env.id!r} runs on the host{self.fixes.get('host', '')}."

    def _dropped(self, env_id: str, dropper: str) -> str:
        return (
            f"{self.export}: {env_id!r} drops final_obs ({dropper}), but {self.library} code may bootstrap from the "
            f"observation an episode reached (the export's {self.reached}); export the env without "
            f"DropFinalObs (drop final_obs only for targets that never bootstrap, e.g. to_jaxmarl)."
        )

    def final_obs(self, env_id: str, ts: Any) -> Any:
        """``ts.final_obs``, refused where it is ``None`` (dropped by a wrapper ``check`` could not see) and the
        target may bootstrap from it; ``None`` passes for a target that never bootstraps."""
        if ts.final_obs is None and self.reached:
            raise InvalidArgumentError(self._dropped(env_id, "a wrapper returned final_obs=None"))
        return ts.final_obs


def agents_kind(env: Any) -> str:
    """``"single"``, ``"simultaneous"`` (observations keyed by ``env.agents``), ``"turn-based"`` (one observation
    with ``current_player`` and ``legal_action_mask``) or ``"multi"`` (agents, neither layout)."""
    if not env.agents:
        return "single"
    fields = getattr(env.single_observation_space, "spaces", None)
    keys = set(fields) if isinstance(fields, dict) else set()
    if keys == set(env.agents):
        return "simultaneous"
    return "turn-based" if {"current_player", "legal_action_mask"} <= keys else "multi"


def dropping_wrapper(env: Any) -> str | None:
    """The wrapper around ``env`` that drops ``final_obs`` (its name, as the fix names it), or ``None``."""
    while isinstance(env, Wrapper):
        if isinstance(env, DropFinalObs):
            return "DropFinalObs"
        if getattr(env, "drop_final_obs", False) is True:
            return f"{type(env).__name__}(drop_final_obs=True)"
        env = env.env
    return None


def check_state(export: str, env: Any, state: Any, expected: Any) -> None:
    """Refuse a state of another structure than ``expected`` (``env``'s own) given to a wrapped env (a wrapper's
    state holds the inner env's, which alone fails deep inside it); unwrapped envs refuse it themselves."""
    if isinstance(env, Wrapper) and not _same_structure(state, expected):
        raise InvalidArgumentError(
            f"{export}: {env.id!r} is wrapped ({type(env).__name__}), and the state given is a {type(state).__name__} "
            f"of another structure than the {type(expected).__name__} its reset and step return (the inner env's "
            f"state?); pass the state the export's reset or step returned."
        )


def _same_structure(a: Any, b: Any) -> bool:
    mine: Any = jax.tree.structure(a)  # typed Any: jax's stubs give PyTreeDef no __eq__
    return bool(mine == jax.tree.structure(b))


class Exported:
    """What every export object shares: ``made`` (its checked call), pickling as that call, ``close()``."""

    made: Made

    def close(self) -> None:
        """Close what the export made (its env where it built it); an env it was given stays its maker's."""
        if self.made.owned:
            self.made.env.close()

    def frame(self) -> Any:
        """The env's frame of its current state (made with ``render_mode="rgb_array"``), else ``None``: what ``render``
        returns; after an episode's last step, the next episode's first (envhub resets in the same step)."""
        runner = getattr(self, "_runner", None)
        return runner.render() if runner is not None and self.made.flags.get("render_mode") == "rgb_array" else None

    def __reduce__(self) -> Any:
        export = getattr(sys.modules[type(self).__module__], self.made.export)  # the entry point beside the class
        return exported_again, (export, self.made)


def exported_again(export: Any, made: Made) -> Any:
    """Unpickle an export: its export call again (``export``, pickled by name), its env unpickled as envs are."""
    out = export(made.env, **made.flags)
    exported = out[0] if isinstance(out, tuple) else out  # to_gymnax returns (env, params)
    exported.made = made
    return exported


def library_missing(export: str, package: str, extra: str) -> MissingDependencyError:
    """The error of an export module whose library is missing: ``package``, and the extra that installs it."""
    line = (
        f'pip install "envhub[{extra}]{compatible_core_range()}"'  # with the range: never PyPI's unrelated envhub 1.x
    )
    return MissingDependencyError(f"envhub.interop.{export}", package, line)


def owning(exported: Any) -> Any:
    """``exported``, now owning its env: its ``close()`` closes it (``register_gymnasium``'s makers built it)."""
    exported.made = dataclasses.replace(exported.made, owned=True)
    return exported


__all__ = [
    "AGENTS",
    "KINDS",
    "TURN_KEYS",
    "Exported",
    "Made",
    "Target",
    "agents_kind",
    "check_state",
    "dropping_wrapper",
    "exported_again",
    "library_missing",
    "owning",
]
