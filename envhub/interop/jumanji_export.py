"""``to_jumanji``: an unbatched JAX-native envhub env as a jumanji ``Environment`` (jumanji's wrappers, Stoix, Mava).

jumanji's contract: ``reset(key) -> (state, timestep)`` and ``step(state, action) -> (state, timestep)``, the state
carrying its own ``key``, the ``TimeStep`` a ``step_type`` (FIRST, MID, LAST), ``reward``, ``discount``,
``observation`` and ``extras``. A raw jumanji env does not auto-reset: its wrappers do (``AutoResetWrapper``,
``VmapAutoResetWrapper``, Mava's ``AutoResetWrapper``), calling ``reset`` on a ``LAST`` step. So the export's step
shows envhub's step as a raw env's:

- ``step_type`` is LAST where the episode ended, with discount 0 where it terminated and 1 where a time limit cut it
  (``truncated``: bootstrap); MID (discount 1) otherwise; ``reset`` gives FIRST.
- A LAST step's ``observation`` is the one the episode reached (``ts.final_obs``); jumanji's auto-reset wrappers
  replace it by their reset's and, with ``next_obs_in_extras=True``, keep it in ``extras["next_obs"]`` (Mava's
  in ``extras["real_next_obs"]``), where a learner bootstraps from it on truncation.
- Restarts are the wrappers', as over a raw jumanji env: the export steps a copy of the env that leaves ended
  episodes as they ended (``envhub.native.auto_reset.leaving_restarts``; the env given is untouched), so a LAST
  step's state is the one the episode ended in and one reset follows an episode end (the wrapper's), not two.

``reset(key)`` is ``env.init(key)`` (a jumanji env made through envhub starts as the raw one with the same key). The
state's ``key`` (what ``AutoResetWrapper`` resets with) is the jumanji state's own where the env is jumanji's
(``carried_key``: the wrappers then restart it as they would the raw env, seed for seed), else folded from the reset
key and split by each ``step`` for envhub's.

A single-agent env keeps its spaces (``envhub.interop.jumanji_specs``: jumanji specs by ``leaves``' rule), its info
as ``extras``; a multi-agent one (jaxmarl, pgx) takes Mava's layout (``envhub.interop.jumanji_agents``: one row per
agent, ``num_agents``, ``time_limit``, ``action_dim``). Nothing is jitted here: jumanji code jits (and vmaps)
itself. The contract (refusals, final_obs, close, pickling) is ``envhub.interop.contract``'s.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp

from envhub.errors import InvalidArgumentError
from envhub.interop import flags
from envhub.interop.contract import Exported, Made, Target, library_missing
from envhub.interop.jumanji_agents import Agents, time_limit
from envhub.interop.jumanji_specs import to_jumanji_spec
from envhub.native.auto_reset import leaving_restarts
from envhub.native.state import JaxState

if TYPE_CHECKING:  # chex's dataclass, as jumanji's states are; typed as the standard one (jumanji does the same)
    from dataclasses import dataclass
else:
    from chex import dataclass

try:
    from jumanji import specs
    from jumanji.env import Environment
    from jumanji.types import StepType, TimeStep
except ImportError as exc:  # pragma: no cover - exercised when jumanji is absent
    raise library_missing("to_jumanji", "jumanji", "jumanji") from exc

#: What a jumanji state's ``key`` is folded from the reset key with (``init`` takes the reset key itself).
KEY_SALT = 0x6A756D
#: The observation an episode reached: where the raw export, and jumanji's and Mava's auto-reset wrappers, put it.
REACHED = "timestep.observation at LAST (extras['next_obs'] under AutoResetWrapper(next_obs_in_extras=True))"
FIXES = {
    "batched": " (jumanji code vmaps env.reset and env.step itself: jumanji.wrappers.VmapAutoResetWrapper)",
    "host": (
        ": jumanji code calls reset and step inside jit and vmap; for a host env use envhub.interop.sebulba_factory "
        "(Stoix's and Mava's Sebulba actors), or to_gymnasium_vector"
    ),
}
TARGET = Target("to_jumanji", "jumanji", jax_native=True, reached=REACHED, fixes=FIXES)
AGENTS_TARGET = Target("to_jumanji", "jumanji", agents="multi", jax_native=True, reached=REACHED, fixes=FIXES)
GLOBAL_STATE = flags._a_bool("add_global_state", "Mava's ObservationGlobalState", "Mava's Observation")


def to_jumanji(env: Any, add_global_state: bool = False) -> EnvhubJumanjiEnv:
    """Expose an unbatched JAX-native envhub env as a jumanji ``Environment`` (see the module docstring); a
    multi-agent env in Mava's layout, with ``global_state`` in its observation where ``add_global_state``. The export
    pickles as this call.

    Raises:
        InvalidArgumentError: ``env`` is no envhub env, batched, a host env or drops ``final_obs``; a multi-agent env
            is neither simultaneous nor turn-based, or its agents differ; a space has no jumanji counterpart;
            ``add_global_state`` is no bool, or True for a single-agent env.
        ClosedEnvironmentError: ``env`` is closed.
    """
    global_state = GLOBAL_STATE("to_jumanji", env, add_global_state)
    multi = bool(getattr(env, "agents", None))  # the contract's check refuses what is no envhub env
    made = (AGENTS_TARGET if multi else TARGET).check(env, add_global_state=global_state)
    if global_state and not multi:
        raise InvalidArgumentError(
            f"to_jumanji(add_global_state=True): {env.id!r} is single-agent, and the global state is a field of Mava's "
            f"multi-agent observation; pass False."
        )
    return EnvhubJumanjiEnv(made)


@dataclass
class EnvhubJumanjiState:
    """The export's state: the envhub env's ``env_state``, the ``key`` jumanji's wrappers reset with (each step
    splits it), the steps of the episode so far and, in a turn-based game, the index of the player to move."""

    env_state: Any
    key: jax.Array
    step_count: jax.Array
    current_player: Any = None


class EnvhubJumanjiEnv(Exported, Environment[Any, Any, Any]):  # type: ignore[misc,unused-ignore]
    """An unbatched JAX-native envhub env behind jumanji's ``Environment`` API, made by ``to_jumanji`` (see the module
    docstring). It has ``time_limit`` (a jumanji env's); a multi-agent one also ``agents``, ``num_agents`` and
    ``action_dim`` (Mava's)."""

    def __init__(self, made: Made):
        self.made, self.env = made, leaving_restarts(made.env)  # jumanji's auto-reset wrappers restart episodes
        env = self.env
        self.layout = Agents(env, made.flags["add_global_state"]) if env.agents else None
        self.time_limit = time_limit(env)  # as a jumanji env's (Mava's wrappers read it)
        if self.layout is not None:
            self.agents, self.num_agents = self.layout.agents, self.layout.num_agents
            self.action_dim = self.layout.action_dim
        self._shape = () if self.layout is None else (self.layout.num_agents,)
        super().__init__()  # jumanji's: reads the specs, so a space without a jumanji counterpart is refused here

    @cached_property
    def observation_spec(self) -> Any:
        if self.layout is not None:
            return self.layout.observation_spec()
        return to_jumanji_spec(self.env.observation_space, "the observation space", "observation")

    @cached_property
    def action_spec(self) -> Any:
        if self.layout is not None:
            return self.layout.action_spec()
        return to_jumanji_spec(self.env.action_space, "the action space", "action")

    @cached_property
    def reward_spec(self) -> Any:
        return specs.Array(self._shape, jnp.float32, "reward")

    @cached_property
    def discount_spec(self) -> Any:
        return specs.BoundedArray(self._shape, jnp.float32, 0.0, 1.0, "discount")

    def reset(self, key: jax.Array) -> tuple[EnvhubJumanjiState, Any]:
        """A new episode: ``(state, timestep)``, its ``step_type`` FIRST; ``env.init(key)`` underneath."""
        env_state, ts = self.env.init(key)
        state = EnvhubJumanjiState(
            env_state=env_state,
            key=carried_key(env_state, jax.random.fold_in(key, KEY_SALT)),
            step_count=jnp.zeros((), jnp.int32),
            current_player=None if self.layout is None else self.layout.mover(ts.obs),
        )
        zeros = jnp.zeros(self._shape, jnp.float32)
        return state, self._timestep(StepType.FIRST, zeros, zeros + 1, self._observe(ts.obs, 0), ts.info)

    def step(self, state: EnvhubJumanjiState, action: Any) -> tuple[EnvhubJumanjiState, Any]:
        """One envhub step shown as a raw jumanji env's: ``LAST`` where the episode ended, with the observation it
        reached and the state it ended in (jumanji's auto-reset wrappers restart it)."""
        if not isinstance(state, EnvhubJumanjiState):  # a closed env: env.step's ClosedEnvironmentError
            raise InvalidArgumentError(
                f"step of the jumanji export of {self.env.id!r} was given a {type(state).__name__} as its state, not "
                f"the EnvhubJumanjiState its reset and step return; pass that state (state, timestep = env.reset(key))."
            )
        key, step_key = jax.random.split(state.key)
        played = action if self.layout is None else self.layout.played(self.env, action, state.current_player)
        env_state, ts = self.env.step(step_key, state.env_state, played)
        reached = TARGET.final_obs(self.env.id, ts)
        count = state.step_count + 1
        if self.layout is None:
            reward, discount = ts.reward, jnp.where(ts.terminated, 0.0, 1.0).astype(jnp.float32)
        else:
            reward, discount = self.layout.rewards(ts.reward), self.layout.discounts(ts)
        step_type = jnp.where(ts.done, StepType.LAST, StepType.MID)
        after = EnvhubJumanjiState(
            env_state=env_state,
            key=carried_key(env_state, key),
            step_count=jnp.where(ts.done, 0, count),
            current_player=None if self.layout is None else self.layout.mover(ts.obs),
        )
        return after, self._timestep(step_type, reward, discount, self._observe(reached, count), ts.info)

    def _observe(self, obs: Any, step_count: Any) -> Any:
        return obs if self.layout is None else self.layout.observe(obs, step_count)

    def _timestep(self, step_type: Any, reward: Any, discount: Any, observation: Any, info: dict[str, Any]) -> Any:
        """jumanji's ``TimeStep``; ``extras`` a new dict each call (jumanji's wrappers add their entries in place)."""
        extras = dict(info) if self.layout is None else self.layout.extras(info)
        return TimeStep(step_type=step_type, reward=reward, discount=discount, observation=observation, extras=extras)

    def render(self, state: EnvhubJumanjiState) -> Any:
        """The envhub env's frame of ``state`` (``env.render``)."""
        return self.env.render(state.env_state)

    def __repr__(self) -> str:
        return f"EnvhubJumanjiEnv({self.env!r}, add_global_state={self.made.flags['add_global_state']})"


def carried_key(env_state: Any, own: jax.Array) -> jax.Array:
    """The ``key`` of the export's state: that of the jumanji state inside ``env_state`` where it holds one (a jumanji
    env made through envhub), so jumanji's wrappers restart from the key they would on the raw env; else ``own``."""
    for leaf in jax.tree.leaves(env_state, is_leaf=lambda x: isinstance(x, JaxState)):
        key = getattr(leaf.env, "key", None) if isinstance(leaf, JaxState) else None
        if isinstance(key, jax.Array) and key.shape == own.shape and key.dtype == own.dtype:
            return key
    return own


__all__ = ["AGENTS_TARGET", "KEY_SALT", "TARGET", "EnvhubJumanjiEnv", "EnvhubJumanjiState", "carried_key", "to_jumanji"]
