"""The multi-agent (Mava) form of the Jumanji-API export: agents stacked on a leading axis, as Mava's systems take them.

A simultaneous env (JaxMARL's: observations and actions keyed by ``env.agents``) and a turn-based game (pgx's: one
observation ``{"observation", "legal_action_mask", "current_player"}``, one action) become one layout:

- the observation is ``Observation(agents_view, action_mask, step_count)`` (``ObservationGlobalState`` with
  ``add_global_state=True``), one row per agent. An agent's view is its observation, or its ``observation`` where it
  carries a ``legal_action_mask``, which is its ``action_mask`` (all ones where the env has none). In a turn-based
  game every agent sees the game's observation (the mover's view) and the others' masks are all ones;
- the action is one array with a row per agent (Mava's); a turn-based game checks every row by ``env.step``'s rule
  (structure, shape, dtype and values: ``ActionError``, as docs/multi-agent.md says of every action) and plays the
  mover's;
- rewards and discounts have one value per agent: the discount is 0 where the episode terminated or that agent is
  done on its own (``info["agent_done"]``, an SMAX unit that died), 1 where the episode was cut by a time limit;
- the env's info is ``extras["env_metrics"]`` (Mava reads it beside its ``episode_metrics``), an entry keyed by agent
  stacked in agent order; an info entry Mava's systems read at the top of ``extras`` (``TOP_LEVEL``) is there too.

Mava takes homogeneous agents only: every agent's view and action space must be the same.
"""

from __future__ import annotations

from typing import Any, cast

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.action_check import check_action
from envhub.core.checking import STRICT, check_values, outermost_check
from envhub.errors import InvalidArgumentError
from envhub.interop.contract import TURN_KEYS, agents_kind
from envhub.interop.jumanji_specs import (
    Observation,
    ObservationGlobalState,
    global_state_spec,
    mask_spec,
    step_count_spec,
    to_jumanji_spec,
)

#: The keys of an agent's observation that carries its legal-action mask (docs/multi-agent.md).
MASKED_KEYS = {"observation", "legal_action_mask"}
#: Info entries Mava's systems read at the top of ``extras``: ``won_episode`` (envhub-jaxmarl's SMAX info, one bool
#: per step), which Mava's evaluator reads as ``timesteps.extras["won_episode"]`` where its env config has
#: ``log_win_rate`` (SMAX's default), and where Mava's own ``SmaxWrapper`` puts it.
TOP_LEVEL = ("won_episode",)
#: ``time_limit`` of an env without one (Mava reads it for ``step_count``'s spec).
NO_LIMIT = 2**31 - 1


def time_limit(env: Any) -> int:
    """``env``'s steps per episode as jumanji envs give them (``time_limit``; ``NO_LIMIT`` where it has none)."""
    limit = env.metadata.get("time_limit")
    return NO_LIMIT if limit is None else int(limit)


class Agents:
    """How one multi-agent envhub env is laid out in the Mava form (see the module docstring).

    Raises:
        InvalidArgumentError: the env is neither simultaneous nor a turn-based game of docs/multi-agent.md; its agents
            are not homogeneous; a space has no jumanji counterpart.
    """

    def __init__(self, env: Any, global_state: bool):
        self.env_id, self.agents, self.global_state = env.id, list(env.agents), global_state
        self.num_agents, kind = len(self.agents), agents_kind(env)
        obs, act = env.single_observation_space, env.single_action_space
        self.turn_based = kind == "turn-based"
        if self.turn_based and _keys(obs) == TURN_KEYS:
            views, actions = (
                {a: cast(spaces.Tree, obs)["observation"] for a in self.agents},
                {a: act for a in self.agents},
            )
            self.masked = True
        elif kind == "simultaneous" and _keys(act) == set(self.agents):
            per_agent = {a: cast(spaces.Tree, obs)[a] for a in self.agents}
            self.masked = all(_keys(s) == MASKED_KEYS for s in per_agent.values())
            views = {a: cast(spaces.Tree, s)["observation"] if self.masked else s for a, s in per_agent.items()}
            actions = {a: cast(spaces.Tree, act)[a] for a in self.agents}
        else:
            raise InvalidArgumentError(
                f"to_jumanji: {env.id!r} is multi-agent but neither simultaneous (observations and actions keyed by "
                f"env.agents) nor a turn-based game (one action, the observation {sorted(TURN_KEYS)}); give it one of "
                f"these layouts (docs/multi-agent.md)."
            )
        self.view, self.action = _homogeneous(env.id, "observation", views), _homogeneous(env.id, "action", actions)
        self.stacked_actions = self.action.batch(self.num_agents)  # Mava's action: one row per agent
        self.action_dim = self.action.n if isinstance(self.action, spaces.Discrete) else int(np.prod(self.action.shape))
        self.time_limit = time_limit(env)

    def observation_spec(self) -> Any:
        from jumanji import specs

        n = self.num_agents
        fields = {
            "agents_view": to_jumanji_spec(self.view.batch(n), "each agent's observation space", "agents_view"),
            "action_mask": mask_spec(n, self.action_dim),
            "step_count": step_count_spec(n, self.time_limit),
        }
        if not self.global_state:
            return specs.Spec(Observation, "ObservationSpec", **fields)
        fields["global_state"] = global_state_spec(self.view, n)
        return specs.Spec(ObservationGlobalState, "ObservationSpec", **fields)

    def action_spec(self) -> Any:
        return to_jumanji_spec(self.stacked_actions, "each agent's action space", "action")

    def observe(self, obs: Any, step_count: jax.Array) -> Any:
        """The Mava observation of envhub's ``obs`` after ``step_count`` steps of the episode."""
        n = self.num_agents
        if self.turn_based:
            view = jax.tree.map(lambda x: jnp.broadcast_to(x, (n, *jnp.shape(x))), obs["observation"])
            mover = jnp.asarray(obs["current_player"], jnp.int32)
            mask = obs["legal_action_mask"][None, :] | (jnp.arange(n) != mover)[:, None]
        else:
            per_agent = [obs[a]["observation"] if self.masked else obs[a] for a in self.agents]
            view = jax.tree.map(lambda *xs: jnp.stack(xs), *per_agent)
            masks = [obs[a]["legal_action_mask"] for a in self.agents] if self.masked else None
            mask = jnp.stack(masks) if masks else jnp.ones((n, self.action_dim), jnp.bool_)
        steps = jnp.full((n,), step_count, jnp.int32)
        if not self.global_state:
            return Observation(view, mask, steps)
        flat = jnp.concatenate([jnp.reshape(x, (n, -1)) for x in jax.tree.leaves(view)], axis=1)
        return ObservationGlobalState(view, mask, jnp.tile(jnp.reshape(flat, (1, -1)), (n, 1)), steps)

    def mover(self, obs: Any) -> Any:
        """The index in ``agents`` of the player to move in ``obs`` (a turn-based game), else ``None``."""
        return jnp.asarray(obs["current_player"], jnp.int32) if self.turn_based else None

    def played(self, env: Any, action: Any, mover: Any) -> Any:
        """envhub's action of Mava's ``action`` (one row per agent): the dict by agent, or the mover's row after every
        row passed ``env.step``'s rule."""
        action = check_action(self.env_id, self.stacked_actions, action)
        if not self.turn_based:
            return {a: action[i] for i, a in enumerate(self.agents)}
        with outermost_check(env) as mode:
            if mode:
                action = check_values(self.env_id, self.stacked_actions, action, hard_stop=mode == STRICT)
        return action[mover]

    def rewards(self, reward: Any) -> jax.Array:
        return jnp.stack([jnp.asarray(reward[a], jnp.float32) for a in self.agents])

    def discounts(self, ts: Any) -> jax.Array:
        own = ts.info.get("agent_done", {})
        done = [
            ts.terminated | (jnp.asarray(own[a]) & ~ts.truncated) if a in own else ts.terminated for a in self.agents
        ]
        return jnp.where(jnp.stack(done), 0.0, 1.0).astype(jnp.float32)

    def extras(self, info: dict[str, Any]) -> dict[str, Any]:
        keyed = set(self.agents)
        stacked = {
            k: jax.tree.map(lambda *xs: jnp.stack(xs), *(v[a] for a in self.agents))
            if isinstance(v, dict) and set(v) == keyed
            else v
            for k, v in info.items()
            if k != "agent_done"
        }
        return {"env_metrics": stacked, **{k: info[k] for k in TOP_LEVEL if k in info}}


def _homogeneous(env_id: str, what: str, per_agent: dict[str, spaces.Space]) -> Any:
    first, *others = per_agent.values()
    if any(other != first for other in others):
        raise InvalidArgumentError(
            f"to_jumanji: the agents of {env_id!r} have different {what} spaces ({per_agent!r:.200}), but Mava's layout "
            f"stacks them on one axis; use envhub.interop.to_jaxmarl (one space per agent) for such an env."
        )
    return first


def _keys(space: spaces.Space) -> set[str]:
    """The keys of a dict ``Tree`` space, else none."""
    return set(space.spaces) if isinstance(space, spaces.Tree) and isinstance(space.spaces, dict) else set()


__all__ = ["MASKED_KEYS", "NO_LIMIT", "TOP_LEVEL", "Agents", "time_limit"]
