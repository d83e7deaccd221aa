"""``to_jaxmarl``: an unbatched JAX-native multi-agent envhub env as a JaxMARL ``MultiAgentEnv`` (IPPO, MAPPO, QMIX).

JaxMARL's contract: ``reset(key) -> (obs, state)`` and ``step(key, state, actions) -> (obs, state, rewards,
dones, infos)``, dicts keyed by agent, auto-resetting in the same step (envhub's own reset: ``obs`` is the next
episode's first after an end). ``dones[agent]`` is the episode's end or that agent's own (``info["agent_done"]``),
``dones["__all__"]`` the episode's: ``terminated | truncated``, since JaxMARL folds time limits into ``done``.
``infos`` holds, beside the env's per-agent entries stacked in agent order, ``terminated`` and ``truncated`` as
``(num_agents,)`` arrays (JaxMARL's layout of infos) and ``final_observation`` (``{agent: obs reached}``): a
baseline that bootstraps at time limits reads those two; ``keep_final_obs=False`` leaves the last out, for
baselines that reshape every info leaf to one value per agent (JaxMARL's IPPO and MAPPO).

An agent's observation ``{"observation", "legal_action_mask"}`` (SMAX, Hanabi, pgx) is its ``observation``, the
mask its ``get_avail_actions`` (all ones where the env has none). A turn-based game (pgx: one action, the player
to move's) takes an action from every agent and plays the mover's; every agent observes the game's observation
(the mover's view); the others' avail actions are all ones (their actions are checked, then ignored).
Nothing is jitted here: JaxMARL code jits (and vmaps) itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.action_check import check_action
from envhub.core.arguments import an_environment
from envhub.core.env import Environment
from envhub.errors import ClosedEnvironmentError, InvalidArgumentError, MissingDependencyError
from envhub.registry.plugin_api import compatible_core_range

try:
    from flax import struct
    from jaxmarl.environments import spaces as jaxmarl_spaces
    from jaxmarl.environments.multi_agent_env import MultiAgentEnv
except ImportError as exc:  # pragma: no cover - exercised when jaxmarl is absent
    # with the range: never PyPI's unrelated envhub 1.x
    line = f'pip install "envhub[jaxmarl]{compatible_core_range()}"'
    raise MissingDependencyError("envhub.interop.to_jaxmarl", "jaxmarl", line) from exc

#: The keys of an observation that carries its legal-action mask (docs/multi-agent.md); ``current_player``: pgx's.
MASKED_KEYS = {"observation", "legal_action_mask"}
TURN_KEYS = MASKED_KEYS | {"current_player"}


@struct.dataclass
class EnvhubMultiAgentState:
    """The export's state: the envhub env's ``env_state``, the avail actions of its last observation (``None``
    where the env has no masks) and, in a turn-based game, the index in ``agents`` of the player to move."""

    env_state: Any
    avail_actions: Any = None
    current_player: Any = None


class EnvhubMultiAgentEnv(MultiAgentEnv):  # type: ignore[misc,unused-ignore]
    """An unbatched multi-agent envhub env behind JaxMARL's ``MultiAgentEnv`` API (see the module docstring)."""

    def __init__(self, env: Environment[Any, Any, Any], keep_final_obs: bool = True):
        super().__init__(len(env.agents))
        self.env, self.keep_final_obs = env, keep_final_obs
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
        self.observation_spaces = {a: to_jaxmarl_space(s, "observation") for a, s in shown.items()}
        self.action_spaces = {a: to_jaxmarl_space(s, "action") for a, s in agent_act.items()}

    @property
    def name(self) -> str:
        return self.env.id

    def reset(self, key: jax.Array) -> tuple[dict[str, Any], EnvhubMultiAgentState]:  # type: ignore[override]
        """A new episode: ``(obs, state)``."""
        env_state, ts = self.env.init(key)
        return self._observe(ts.obs), self._state(env_state, ts.obs)

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
        if self.turn_based:  # every agent's action through env.step's rule, then the mover's
            checked = check_action(self.env.id, self._actions, action)
            action = jnp.stack([checked[a] for a in self.agents])[state.current_player]
        env_state, ts = self.env.step(key, state.env_state, action)
        done = ts.done
        agent_done = ts.info.get("agent_done", {})
        dones = {a: done | agent_done[a] if a in agent_done else done for a in self.agents}
        infos = {k: self._stacked(v) if self._per_agent(v) else v for k, v in ts.info.items() if k != "agent_done"}
        infos["terminated"] = jnp.full((self.num_agents,), ts.terminated)
        infos["truncated"] = jnp.full((self.num_agents,), ts.truncated)
        if self.keep_final_obs and ts.final_obs is not None:
            infos["final_observation"] = self._observe(ts.final_obs)
        rewards = {a: ts.reward[a] for a in self.agents}
        return self._observe(ts.obs), self._state(env_state, ts.obs), rewards, {**dones, "__all__": done}, infos

    def step_env(self, key: jax.Array, state: Any, actions: Any) -> tuple[Any, ...]:
        raise NotImplementedError(
            f"the JaxMARL export of {self.env.id!r} auto-resets inside step (envhub's same-step reset); call "
            f"step(key, state, actions): infos['final_observation'] holds the observations reached."
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

    def _observe(self, obs: Any) -> dict[str, Any]:
        """JaxMARL's observations of envhub's ``obs``: one per agent, the mask left out where it has one."""
        per_agent = {a: obs for a in self.agents} if self.turn_based else {a: obs[a] for a in self.agents}
        return {a: o["observation"] for a, o in per_agent.items()} if self._masked else per_agent

    def _state(self, env_state: Any, obs: Any) -> EnvhubMultiAgentState:
        if not self._masked:
            return EnvhubMultiAgentState(env_state)
        if not self.turn_based:
            return EnvhubMultiAgentState(env_state, {a: obs[a]["legal_action_mask"] for a in self.agents})
        mover, mask = jnp.asarray(obs["current_player"], jnp.int32), obs["legal_action_mask"]
        avail = {a: mask | (mover != i) for i, a in enumerate(self.agents)}
        return EnvhubMultiAgentState(env_state, avail, mover)

    def _per_agent(self, value: Any) -> bool:
        return isinstance(value, dict) and set(value) == set(self.agents)

    def _stacked(self, value: dict[str, Any]) -> Any:
        """An info entry keyed by agent as JaxMARL lays infos out: one leading axis over ``agents``."""
        return jax.tree.map(lambda *xs: jnp.stack(xs), *(value[a] for a in self.agents))

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


def to_jaxmarl(env: Environment[Any, Any, Any], keep_final_obs: bool = True) -> EnvhubMultiAgentEnv:
    """Expose an unbatched multi-agent JAX-native envhub env as a JaxMARL ``MultiAgentEnv``.

    Raises:
        InvalidArgumentError: ``env`` is batched, single-agent or a host env; a turn-based game's observation is
            not the dict of docs/multi-agent.md; a space has no JaxMARL counterpart.
    """
    an_environment("to_jaxmarl", env)
    if not isinstance(keep_final_obs, (bool, np.bool_)):
        raise InvalidArgumentError(
            f"to_jaxmarl(keep_final_obs={keep_final_obs!r}): give True (infos['final_observation'] holds the "
            f"observations reached) or False (left out, for baselines that reshape every info leaf per agent)."
        )
    if env.num_envs is not None:
        raise InvalidArgumentError(
            f"to_jaxmarl needs an unbatched env; {env.id!r} has num_envs={env.num_envs}: make it without num_envs "
            f"(JaxMARL code such as its IPPO and MAPPO baselines vmaps env.reset and env.step itself)."
        )
    if not env.agents:
        raise InvalidArgumentError(
            f"to_jaxmarl needs a multi-agent env; {env.id!r} is single-agent (env.agents is empty): use "
            f"envhub.interop.to_gymnax for JAX code written against gymnax (PureJaxRL, rejax)."
        )
    if not env.is_jax_native:
        raise InvalidArgumentError(
            f"to_jaxmarl needs a JAX-native env; {env.id!r} runs on the host: use "
            f"envhub.interop.to_pettingzoo_parallel (or to_pettingzoo_aec) for host envs."
        )
    return EnvhubMultiAgentEnv(env, bool(keep_final_obs))


def to_jaxmarl_space(space: spaces.Space, what: str = "observation") -> Any:
    """The JaxMARL space of an envhub ``space``: ``Discrete`` (from 0, one int), ``MultiDiscrete`` (from 0, one axis),
    ``Box``, ``Dict``/``Tuple`` of them; other integer spaces become an integer ``Box`` with inclusive bounds."""
    if isinstance(space, spaces.Discrete) and space.shape == () and space.start_value == 0:
        return jaxmarl_spaces.Discrete(space.n, dtype=space.dtype)
    if isinstance(space, spaces.MultiDiscrete):
        one_axis = len(space.shape) == 1 and not isinstance(space, spaces.Discrete)
        if one_axis and space.dtype == np.int32 and not space.start.any():
            return jaxmarl_spaces.MultiDiscrete([int(n) for n in space.nvec])
        low, high = space.start.astype(space.dtype), (space.start + space.nvec - 1).astype(space.dtype)
        return jaxmarl_spaces.Box(low, high, space.shape, space.dtype)
    if isinstance(space, spaces.Box):
        return jaxmarl_spaces.Box(
            space.low.astype(space.dtype), space.high.astype(space.dtype), space.shape, space.dtype
        )
    if isinstance(space, spaces.Tree):
        return _tree(space.spaces, what)
    raise InvalidArgumentError(
        f"to_jaxmarl: the {what} space {space!r} has no JaxMARL counterpart (JaxMARL has Discrete, MultiDiscrete, Box, "
        f"Dict, Tuple)."
    )


def _tree(node: Any, what: str) -> Any:
    if isinstance(node, spaces.Space):
        return to_jaxmarl_space(node, what)
    if isinstance(node, dict):
        return jaxmarl_spaces.Dict({k: _tree(v, what) for k, v in node.items()})
    if isinstance(node, (tuple, list)):
        return jaxmarl_spaces.Tuple([_tree(v, what) for v in node])
    raise InvalidArgumentError(
        f"to_jaxmarl: the {what} space holds a {type(node).__name__} node; JaxMARL spaces nest only dicts and tuples."
    )


def _keys(space: spaces.Space) -> set[str]:
    """The keys of a dict ``Tree`` space, else none."""
    return set(space.spaces) if isinstance(space, spaces.Tree) and isinstance(space.spaces, dict) else set()


__all__ = ["EnvhubMultiAgentEnv", "EnvhubMultiAgentState", "to_jaxmarl", "to_jaxmarl_space"]
