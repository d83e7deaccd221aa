"""``to_pettingzoo_aec``: an unbatched turn-based envhub game (e.g. ``pgx/...``) behind PettingZoo's ``AECEnv`` API
(imports pettingzoo and gymnasium).

One compiled call per move (``compiled.Runner``). The agent to act is the player to move
(``obs["current_player"]``); its observation is ``{"observation": ..., "action_mask": int8[n]}`` (PettingZoo's
name and dtype for the legal-action mask). An agent not to move observes what it saw at its last turn (the
game's first observation before it has moved). When the game ends every agent is done; each then steps with
``None`` and leaves ``agents``, as PettingZoo's own classic games do; call ``reset`` for the next game.

``step`` refuses what ``env.step`` refuses, with its errors (``ActionError``; checked on the host before anything
runs, so the export stays usable). Lifecycle mistakes (``step``/``observe`` before ``reset``, ``step`` once every
agent has left, an action for a done agent, an unknown agent) are ``InvalidArgumentError``; use after the env's
``close()`` is ``ClosedEnvironmentError``. The contract (refusals, final_obs, close, pickling) is
``envhub.interop.contract``'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envhub.errors import InvalidArgumentError
from envhub.host.gymnasium_spaces import to_gymnasium_space
from envhub.interop.compiled import Runner
from envhub.interop.contract import Exported, Made, Target, library_missing
from envhub.interop.flags import drawn_modes, known_agent

try:
    import gymnasium
    import pettingzoo
except ImportError as exc:  # pragma: no cover - exercised when it is absent
    package = "gymnasium" if (exc.name or "").startswith("gymnasium") else "pettingzoo"
    raise library_missing("to_pettingzoo_aec", package, package) from exc

FIXES = {"single-agent": ": use to_gymnasium", "multi-agent": ": use to_pettingzoo_parallel"}
TARGET = Target("to_pettingzoo_aec", "PettingZoo", agents="turn-based", reached="observe() at the end", fixes=FIXES)


def to_pettingzoo_aec(env: Any, seed: int = 0, render_mode: str | None = None) -> EnvhubAECEnv:
    """Expose an unbatched turn-based envhub game (e.g. ``pgx/...``: one observation with ``current_player`` and
    ``legal_action_mask``) as a PettingZoo ``AECEnv``. ``render_mode="rgb_array"``: ``render()`` returns the env's
    frame of its current state. It pickles as this call (the env by its make id).

    Raises:
        InvalidArgumentError: ``env`` is no envhub env, batched, single-agent or not turn-based, or drops
            ``final_obs``; ``seed`` is no int from 0 to 2**63 - 1; ``render_mode`` is not one ``env`` draws.
        ClosedEnvironmentError: ``env`` is closed.
    """
    return EnvhubAECEnv(TARGET.check(env, seed=seed, render_mode=render_mode))


class EnvhubAECEnv(Exported, pettingzoo.AECEnv):  # type: ignore[misc]
    """A turn-based multi-agent envhub env as a PettingZoo ``AECEnv``, made by ``to_pettingzoo_aec`` (no auto-reset:
    call ``reset`` when ``agents`` is empty). At the game's end, observations are the position reached."""

    def __init__(self, made: Made):
        self.made, self.env = made, made.env
        env = self.env
        self.possible_agents = list(env.agents)
        self.metadata = {"name": env.id, "render_modes": drawn_modes(env), "is_parallelizable": False}
        self.render_mode = made.flags["render_mode"]
        spaces_of_one = env.single_observation_space.spaces
        n = int(spaces_of_one["legal_action_mask"].shape[0])
        self._obs_space = gymnasium.spaces.Dict(
            {
                "observation": to_gymnasium_space(spaces_of_one["observation"]),
                "action_mask": gymnasium.spaces.Box(0, 1, (n,), np.int8),
            }
        )
        self._action_space = to_gymnasium_space(env.single_action_space)
        self._runner = Runner(env, made.flags["seed"])
        self._seen: dict[str, Any] = {}

    def observation_space(self, agent: str) -> Any:
        known_agent(self.env.id, self.possible_agents, agent, "observation_space")
        return self._obs_space

    def action_space(self, agent: str) -> Any:
        known_agent(self.env.id, self.possible_agents, agent, "action_space")
        return self._action_space

    def observe(self, agent: str) -> Any:
        known_agent(self.env.id, self.possible_agents, agent, "observe")
        self._runner.check_started("observe")
        return self._seen[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        ts = self._runner.reset(seed)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._seen = {a: self._as_seen(ts.obs) for a in self.agents}
        self.agent_selection = self.possible_agents[int(ts.obs["current_player"])]

    def step(self, action: Any) -> None:
        self._runner.check_started("step")
        if not self.agents:
            raise InvalidArgumentError(
                f"step() of {self.env.id!r}: the game is over and every agent has left: call reset()."
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise InvalidArgumentError(
                    f"step({action!r}) of {self.env.id!r}: {agent!r} is done, so its only valid action is None "
                    f"(PettingZoo's rule): step(None) until agents is empty, then reset()."
                )
            self._was_dead_step(action)
            return
        ts = self._runner.step(action)  # refuses, as env.step does, before anything runs
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: float(ts.reward[a]) for a in self.agents}
        if bool(ts.terminated) or bool(ts.truncated):
            reached = self._as_seen(TARGET.final_obs(self.env.id, ts))
            self._seen = {a: reached for a in self.agents}
            self.terminations = {a: bool(ts.terminated) for a in self.agents}
            self.truncations = {a: bool(ts.truncated) for a in self.agents}
        else:
            self.agent_selection = self.possible_agents[int(ts.obs["current_player"])]
            self._seen[self.agent_selection] = self._as_seen(ts.obs)
        self._accumulate_rewards()

    def _as_seen(self, obs: Any) -> dict[str, np.ndarray]:
        return {"observation": obs["observation"], "action_mask": np.asarray(obs["legal_action_mask"], np.int8)}

    def render(self) -> Any:
        return self.frame()


__all__ = ["TARGET", "EnvhubAECEnv", "to_pettingzoo_aec"]
