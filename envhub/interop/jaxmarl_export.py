"""``to_jaxmarl``: an unbatched JAX-native multi-agent envhub env as a JaxMARL ``MultiAgentEnv`` (IPPO, MAPPO, QMIX).

JaxMARL's contract: ``reset(key) -> (obs, state)`` and ``step(key, state, actions) -> (obs, state, rewards,
dones, infos)``, dicts keyed by agent, auto-resetting in the same step (envhub's own reset: ``obs`` is the next
episode's first after an end). ``dones[agent]`` is the episode's end or that agent's own (``info["agent_done"]``),
``dones["__all__"]`` the episode's: ``terminated | truncated``, since JaxMARL folds time limits into ``done``.
Every leaf of ``infos`` leads with one value per agent, as JaxMARL's baselines need (they reshape each to
``(num_envs * num_agents,)``): the env's entries keyed by agent stacked in agent order, its other entries (SMAX's
``won_episode``, the coin game's ``inner_episode_done``), ``terminated`` and ``truncated`` repeated for each agent, as
JaxMARL's ``SMAXLogWrapper`` repeats its episode values. The env's ``info["world_state"]`` (SMAX's global state) is
``obs["world_state"]``, where jaxmarl's SMAX puts it and JaxMARL's MAPPO reads it. Attributes the export lacks are
the envhub env's (SMAX's ``state_size`` and ``num_allies``), as JaxMARL's wrappers read their env's. The
observations reached live in the state, where baselines do not reshape them: ``state.final_observation``
(``{agent: obs reached}``, the obs itself where the episode goes on; ``None`` with ``keep_final_obs=False`` or an
env that drops ``final_obs``): a baseline that bootstraps at time limits reads it where ``truncated``. JaxMARL's
own contract has no observation reached (its baselines never bootstrap), so an env without ``final_obs``
(``DropFinalObs``) is taken (``envhub.interop.contract``).

An agent's observation ``{"observation", "legal_action_mask"}`` (SMAX, Hanabi, pgx) is its ``observation``, the
mask its ``get_avail_actions`` (all ones where the env has none). A turn-based game (pgx: one action, the player
to move's) takes an action from every agent, checks every one by ``env.step``'s rule (structure, shape, dtype and
values: ``ActionError``, as docs/multi-agent.md says of every action) and plays the mover's; every agent observes
the game's observation (the mover's view); the others' avail actions are all ones. Nothing is jitted here:
JaxMARL code jits (and vmaps) itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.action_check import check_action
from envhub.core.checking import STRICT, check_values, outermost_check
from envhub.errors import ClosedEnvironmentError, InvalidArgumentError
from envhub.interop.contract import TURN_KEYS, Exported, Made, Target, library_missing
from envhub.interop.leaves import gymnax_style_space

try:
    from flax import struct
    from jaxmarl.environments import spaces as jaxmarl_spaces
    from jaxmarl.environments.multi_agent_env import MultiAgentEnv
except ImportError as exc:  # pragma: no cover - exercised when jaxmarl is absent
    raise library_missing("to_jaxmarl", "jaxmarl", "jaxmarl") from exc

#: The keys of an observation that carries its legal-action mask (docs/multi-agent.md); a turn-based one's: TURN_KEYS.
MASKED_KEYS = {"observation", "legal_action_mask"}
#: The info entry of an env's global state (envhub-jaxmarl's SMAX), which JaxMARL's envs give as this observation.
WORLD_STATE = "world_state"

TARGET = Target(
    "to_jaxmarl",
    "JaxMARL",
    agents="multi",
    jax_native=True,
    fixes={
        "batched": " (JaxMARL code such as its IPPO and MAPPO baselines vmaps env.reset and env.step itself)",
        "single-agent": ": use envhub.interop.to_gymnax for JAX code written against gymnax (PureJaxRL, rejax)",
        "host": ": use envhub.interop.to_pettingzoo_parallel (or to_pettingzoo_aec) for host envs",
    },
)


def to_jaxmarl(env: Any, keep_final_obs: bool = True) -> EnvhubMultiAgentEnv:
    """Expose an unbatched multi-agent JAX-native envhub env as a JaxMARL ``MultiAgentEnv``; JaxMARL's baselines run
    on it unchanged. ``keep_final_obs=False`` keeps no ``state.final_observation`` (memory). It pickles as this call.

    Raises:
        InvalidArgumentError: ``env`` is no envhub env, batched, single-agent or a host env; a turn-based game's
            observation is not the dict of docs/multi-agent.md; a space has no JaxMARL counterpart;
            ``keep_final_obs`` is no bool.
        ClosedEnvironmentError: ``env`` is closed.
    """
    return EnvhubMultiAgentEnv(TARGET.check(env, keep_final_obs=keep_final_obs))


@struct.dataclass
class EnvhubMultiAgentState:
    """The export's state: the envhub env's ``env_state``, the avail actions of its last observation (``None``
    where the env has no masks), in a turn-based game the index in ``agents`` of the player to move, and
    ``final_observation``: each agent's observation reached by the last step (``None`` where not kept)."""

    env_state: Any
    avail_actions: Any = None
    current_player: Any = None
    final_observation: Any = None


class EnvhubMultiAgentEnv(Exported, MultiAgentEnv):  # type: ignore[misc,unused-ignore]
    """An unbatched multi-agent envhub env behind JaxMARL's ``MultiAgentEnv`` API, made by ``to_jaxmarl`` (see the
    module docstring)."""

    def __init__(self, made: Made):
        env = made.env
        super().__init__(len(env.agents))
        self.made, self.env, self.keep_final_obs = made, env, made.flags["keep_final_obs"]
        self.agents = list(env.agents)
        obs, act = env.single_observation_space, env.single_action_space
        self.turn_based = not (isinstance(act, spaces.Tree) and _keys(act) == set(self.agents))
        if self.turn_based:
            if _keys(obs) != TURN_KEYS:
                raise InvalidArgumentError(
                    f"to_jaxmarl: {env.id!r} takes one action (a turn-based game), so its observation must be the "
                    f"dict {sorted(TURN_KEYS)} (docs/multi-agent.md), not {obs!r}; do not flatten it (flatten only "
                    f"obs['observation'], e.g. with envhub.wrappers.TransformObservation)."
                )
            agent_obs, agent_act = {a: obs for a in self.agents}, {a: act for a in self.agents}
        else:
            tree_obs, tree_act = cast(spaces.Tree, obs), cast(spaces.Tree, act)
            agent_obs, agent_act = {a: tree_obs[a] for a in self.agents}, {a: tree_act[a] for a in self.agents}
        self._masked = all(_keys(s) in (MASKED_KEYS, TURN_KEYS) for s in agent_obs.values())
        self._actions = spaces.Tree(agent_act)  # the turn-based game's per-agent actions, checked by check_action
        shown = {a: cast(spaces.Tree, s)["observation"] if self._masked else s for a, s in agent_obs.items()}
        self.observation_spaces = {a: to_jaxmarl_space(s, f"{a}'s observation space") for a, s in shown.items()}
        self.action_spaces = {a: to_jaxmarl_space(s, f"{a}'s action space") for a, s in agent_act.items()}

    @property
    def name(self) -> str:
        return self.env.id

    def reset(self, key: jax.Array) -> tuple[dict[str, Any], EnvhubMultiAgentState]:  # type: ignore[override]
        """A new episode: ``(obs, state)``."""
        env_state, ts = self.env.init(key)
        return self._observe(ts.obs, ts.info), self._state(env_state, ts)

    def step(  # type: ignore[override]
        self, key: jax.Array, state: EnvhubMultiAgentState, actions: dict[str, Any], reset_state: Any = None
    ) -> tuple[Any, ...]:
        """One step with same-step auto-reset: ``(obs, state, rewards, dones, infos)``; ``key`` goes to envhub's step."""
        if reset_state is not None:
            raise InvalidArgumentError(
                f"step(..., reset_state=...) of the JaxMARL export of {self.env.id!r}: envhub resets in the same "
                f"step itself (its own reset, spare initial states); call step(key, state, actions)."
            )
        if self.env.closed:
            raise ClosedEnvironmentError(self.env.id, "step")
        if not isinstance(state, EnvhubMultiAgentState):
            raise InvalidArgumentError(
                f"step of the JaxMARL export of {self.env.id!r} was given a {type(state).__name__} as its state, not "
                f"the EnvhubMultiAgentState its reset and step return; pass that state (obs, state = env.reset(key))."
            )
        action = self._scalar_discrete(actions)
        if self.turn_based:  # every agent's action through env.step's rule (values too), then the mover's played
            action = check_action(self.env.id, self._actions, action)
            with outermost_check(self.env) as mode:
                if mode:
                    action = check_values(self.env.id, self._actions, action, hard_stop=mode == STRICT)
            action = jnp.stack([action[a] for a in self.agents])[state.current_player]
        env_state, ts = self.env.step(key, state.env_state, action)
        done = ts.done
        agent_done = ts.info.get("agent_done", {})
        dones = {a: done | agent_done[a] if a in agent_done else done for a in self.agents}
        own = {k: v for k, v in ts.info.items() if k not in ("agent_done", WORLD_STATE)}
        own.update(terminated=ts.terminated, truncated=ts.truncated)
        infos = {k: self._per_agent(v) for k, v in own.items()}
        rewards = {a: ts.reward[a] for a in self.agents}
        return self._observe(ts.obs, ts.info), self._state(env_state, ts), rewards, {**dones, "__all__": done}, infos

    def step_env(self, key: jax.Array, state: Any, actions: Any) -> tuple[Any, ...]:
        raise NotImplementedError(
            f"the JaxMARL export of {self.env.id!r} auto-resets inside step (envhub's same-step reset); call "
            f"step(key, state, actions): state.final_observation holds the observations reached."
        )

    def get_avail_actions(self, state: EnvhubMultiAgentState) -> dict[str, jax.Array]:  # type: ignore[override]
        """Each agent's legal actions (bool, one per action): the env's masks, else all ones."""
        if state.avail_actions is not None:
            return dict(state.avail_actions)
        return {a: jnp.ones((self._num_actions(a),), jnp.bool_) for a in self.agents}

    def _scalar_discrete(self, actions: Any) -> Any:
        """``actions`` with a discrete action of shape ``(1,)`` as the scalar it stands for: JaxMARL's baselines send
        them so (IPPO's ``unbatchify`` keeps a trailing axis) and JaxMARL's envs take them; the rest is env.step's rule."""
        if not isinstance(actions, Mapping):
            return actions
        scalar = {a for a, s in self.action_spaces.items() if isinstance(s, jaxmarl_spaces.Discrete)}
        return {a: jnp.reshape(x, ()) if a in scalar and np.shape(x) == (1,) else x for a, x in actions.items()}

    def _observe(self, obs: Any, info: Any = None) -> dict[str, Any]:
        """JaxMARL's observations of envhub's ``obs``: one per agent, the mask left out where it has one; with
        ``info``, its global state as ``"world_state"`` where it has one (jaxmarl's SMAX's observations)."""
        per_agent = {a: obs for a in self.agents} if self.turn_based else {a: obs[a] for a in self.agents}
        out = {a: o["observation"] for a, o in per_agent.items()} if self._masked else per_agent
        if info is not None and WORLD_STATE in info:
            out[WORLD_STATE] = info[WORLD_STATE]
        return out

    def _state(self, env_state: Any, ts: Any) -> EnvhubMultiAgentState:
        obs = ts.obs
        reached = self._observe(ts.final_obs) if self.keep_final_obs and ts.final_obs is not None else None
        if not self._masked:
            return EnvhubMultiAgentState(env_state, final_observation=reached)
        if not self.turn_based:
            avail = {a: obs[a]["legal_action_mask"] for a in self.agents}
            return EnvhubMultiAgentState(env_state, avail, final_observation=reached)
        mover, mask = jnp.asarray(obs["current_player"], jnp.int32), obs["legal_action_mask"]
        avail = {a: mask | (mover != i) for i, a in enumerate(self.agents)}
        return EnvhubMultiAgentState(env_state, avail, mover, reached)

    def _per_agent(self, value: Any) -> Any:
        """An info entry as JaxMARL lays infos out, one leading axis over ``agents``: an entry keyed by agent stacked
        in agent order, any other repeated for each agent."""
        if isinstance(value, dict) and set(value) == set(self.agents):
            return jax.tree.map(lambda *xs: jnp.stack(xs), *(value[a] for a in self.agents))
        return jax.tree.map(lambda x: jnp.broadcast_to(x, (self.num_agents, *jnp.shape(x))), value)

    def __getattr__(self, name: str) -> Any:
        """A public attribute the export lacks is its envhub env's (SMAX's ``state_size``, ``num_allies``: JaxMARL's
        MAPPO reads them), as JaxMARL's wrappers read their env's; private ones and dunders are never passed on."""
        if name.startswith("_") or name in ("env", "made", "keep_final_obs"):
            raise AttributeError(name)
        try:
            return getattr(self.env, name)
        except AttributeError:
            raise AttributeError(
                f"the JaxMARL export of {self.env.id!r} has no attribute {name!r}, nor has its envhub env"
            ) from None

    def _num_actions(self, agent: str) -> int:
        space = self.action_spaces[agent]
        if not isinstance(space, jaxmarl_spaces.Discrete):
            raise InvalidArgumentError(
                f"get_avail_actions of the JaxMARL export of {self.env.id!r}: {agent}'s actions are {space!r}, not "
                f"Discrete; available actions are one flag per discrete action."
            )
        return int(space.n)

    def __repr__(self) -> str:
        return f"EnvhubMultiAgentEnv({self.env!r}, keep_final_obs={self.keep_final_obs})"


def to_jaxmarl_space(space: spaces.Space, what: str = "the observation space") -> Any:
    """The JaxMARL space of an envhub ``space`` (``envhub.interop.leaves``' rule): ``Discrete`` (one integer from 0,
    any integer dtype, kept), ``MultiDiscrete`` (one axis from 0), ``Box`` (other integer spaces with their inclusive
    bounds), ``Dict``/``Tuple`` of them."""
    return gymnax_style_space("to_jaxmarl", jaxmarl_spaces, what, space, lambda dtype: dtype)


def _keys(space: spaces.Space) -> set[str]:
    """The keys of a dict ``Tree`` space, else none."""
    return set(space.spaces) if isinstance(space, spaces.Tree) and isinstance(space.spaces, dict) else set()


__all__ = ["TARGET", "EnvhubMultiAgentEnv", "EnvhubMultiAgentState", "to_jaxmarl", "to_jaxmarl_space"]
