"""``to_pettingzoo_parallel``: an unbatched simultaneous multi-agent envhub env behind PettingZoo's ``ParallelEnv``
API (imports pettingzoo and gymnasium).

One compiled call per step (``compiled.Runner``), as the gymnasium exports. Episodes end for every agent at
once (envhub's episode-level ``terminated``/``truncated``): on that step every agent is reported done and
leaves ``agents``; call ``reset`` to start the next. An agent that ended earlier (a dead SMAX unit) stays in
``agents`` with the backend's values for it, as in envhub; its ``infos[agent]["agent_done"]`` says so.

``step`` refuses what ``env.step`` refuses, with its errors (``ActionError`` naming the agent, the value and the fix;
checked on the host before anything runs, so the export stays usable); lifecycle mistakes (``step`` before ``reset``
or after the episode's end, an unknown agent) are ``InvalidArgumentError``; use after the env's ``close()`` is
``ClosedEnvironmentError``. The contract (refusals, final_obs, close, pickling) is ``envhub.interop.contract``'s.
"""

from __future__ import annotations

from typing import Any, cast

from envhub import spaces
from envhub.errors import InvalidArgumentError
from envhub.host.gymnasium_spaces import to_gymnasium_space
from envhub.interop.compiled import Runner
from envhub.interop.contract import Exported, Made, Target, library_missing
from envhub.interop.flags import drawn_modes, known_agent

try:
    import pettingzoo
except ImportError as exc:  # pragma: no cover - exercised when it is absent
    raise library_missing("to_pettingzoo_parallel", "pettingzoo", "pettingzoo") from exc

FIXES = {"single-agent": ": use to_gymnasium", "multi-agent": ": use to_pettingzoo_aec for a turn-based game"}
TARGET = Target(
    "to_pettingzoo_parallel", "PettingZoo", agents="simultaneous", reached="step's obs at the end", fixes=FIXES
)


def to_pettingzoo_parallel(env: Any, seed: int = 0, render_mode: str | None = None) -> EnvhubParallelEnv:
    """Expose an unbatched simultaneous multi-agent envhub env (e.g. ``jaxmarl/...``) as a PettingZoo ``ParallelEnv``:
    observations, actions and rewards keyed by ``env.agents``. ``render_mode="rgb_array"``: ``render()`` returns the
    env's frame of its current state. It pickles as this call (the env by its make id).

    Raises:
        InvalidArgumentError: ``env`` is no envhub env, batched, single-agent or turn-based (one observation, the
            player to move's), or drops ``final_obs``; ``seed`` is no int from 0 to 2**63 - 1; ``render_mode`` is
            not one ``env`` draws.
        ClosedEnvironmentError: ``env`` is closed.
    """
    return EnvhubParallelEnv(TARGET.check(env, seed=seed, render_mode=render_mode))


class EnvhubParallelEnv(Exported, pettingzoo.ParallelEnv):  # type: ignore[misc]
    """A simultaneous multi-agent envhub env as a PettingZoo ``ParallelEnv``, made by ``to_pettingzoo_parallel`` (no
    auto-reset: call ``reset`` when ``agents`` is empty). At an episode end, observations are the ones reached.
    """

    def __init__(self, made: Made):
        self.made, self.env = made, made.env
        self.possible_agents = list(self.env.agents)
        self.agents: list[str] = []
        self.metadata = {"name": self.env.id, "render_modes": drawn_modes(self.env), "is_parallelizable": True}
        self.render_mode = made.flags["render_mode"]
        obs, act = cast(spaces.Tree, self.env.single_observation_space), cast(spaces.Tree, self.env.single_action_space)
        self._obs_spaces = {a: to_gymnasium_space(obs[a]) for a in self.possible_agents}
        self._action_spaces = {a: to_gymnasium_space(act[a]) for a in self.possible_agents}
        self._runner = Runner(self.env, made.flags["seed"])

    def observation_space(self, agent: str) -> Any:
        return self._obs_spaces[known_agent(self.env.id, self.possible_agents, agent, "observation_space")]

    def action_space(self, agent: str) -> Any:
        return self._action_spaces[known_agent(self.env.id, self.possible_agents, agent, "action_space")]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, Any]:
        ts = self._runner.reset(seed)
        self.agents = list(self.possible_agents)
        return {a: ts.obs[a] for a in self.agents}, {a: self._agent_info(ts.info, a) for a in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[Any, Any, Any, Any, Any]:
        if not self.agents and self._runner.carry is not None and not self.env.closed:
            raise InvalidArgumentError(
                f"step() of {self.env.id!r}: the episode has ended: call reset() (agents is empty)."
            )
        ts = self._runner.step(actions)  # refuses, as env.step does, before anything runs
        agents = list(self.agents)
        obs = TARGET.final_obs(self.env.id, ts)
        terminated, truncated = bool(ts.terminated), bool(ts.truncated)
        if terminated or truncated:
            self.agents = []
        return (
            {a: obs[a] for a in agents},
            {a: float(ts.reward[a]) for a in agents},
            {a: terminated for a in agents},
            {a: truncated for a in agents},
            {a: self._agent_info(ts.info, a) for a in agents},
        )

    def _agent_info(self, info: dict[str, Any], agent: str) -> dict[str, Any]:
        """An agent's share of envhub's ``info``: the entries keyed by agent, that agent's value."""
        return {k: v[agent] for k, v in info.items() if isinstance(v, dict) and agent in v}

    def render(self) -> Any:
        return self.frame()


__all__ = ["TARGET", "EnvhubParallelEnv", "to_pettingzoo_parallel"]
