"""``JaxMarlEnvironment``: a JaxMARL environment behind the envhub API (docs/multi-agent.md, simultaneous games).

How each family ends an episode, from jaxmarl 0.2.0's ``step_env`` (``dones["__all__"]``):

- ``mpe``, ``overcooked``: only at their ``max_steps``: a time limit, so ``truncated``.
- ``smax``: when one side has no unit alive (``terminated``, a win or a loss) or at ``max_steps``
  (``truncated``); a side wiped out on the limit step is ``terminated``.
- ``hanabi``: when the game is over (``terminated``); no time limit of its own.
- ``coin_game``: after ``num_outer_steps`` rounds of ``num_inner_steps``: a time limit, ``truncated``.
"""

from __future__ import annotations

import importlib.metadata
import io
import os
import sys
import tempfile
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import envhub
from envhub.plugin import InvalidArgumentError, JaxStep, draw_each, positive_int, spaces

# What jaxmarl 0.2.0's import prints about jaxrobotarium, its optional submoduled envs (which envhub-jaxmarl
# does not list), whether or not it is installed; import_jaxmarl drops these lines and nothing else.
SUBMODULE_LINES = frozenset(
    {
        "Importing submoduled environments...",
        "Submoduled environments imported successfully.",
        "Submoduled environments not found. Skipping import.",
    }
)


def import_jaxmarl() -> Any:
    """Import jaxmarl, printing only what is news. jaxmarl 0.2.0's import points ``sys.stdout``/``sys.stderr``
    back at the process's own (its MABrax module silences brax that way), undoing any redirection (pytest's
    capture, a notebook's), then prints lines about its optional submodules (``SUBMODULE_LINES``), which tell
    the user nothing and would corrupt ``envhub list --json``: while it imports, Python's stdout and file
    descriptor 1 are captured, those lines dropped, anything else written to stderr, and both streams restored."""
    out, err = sys.stdout, sys.stderr
    for stream in (out, sys.__stdout__):
        if stream is not None:
            stream.flush()
    with tempfile.TemporaryFile() as fd_capture:
        try:
            saved: int | None = os.dup(1)
            os.dup2(fd_capture.fileno(), 1)
        except OSError:  # no descriptor 1 to capture: only Python's stdout is
            saved = None
        sys.stdout = py_capture = io.StringIO()
        try:
            import jaxmarl
            import jaxmarl.registration  # noqa: F401
        finally:
            if sys.__stdout__ is not None:
                sys.__stdout__.flush()
            if saved is not None:
                os.dup2(saved, 1)
                os.close(saved)
            sys.stdout, sys.stderr = out, err
            fd_capture.seek(0)
            printed = py_capture.getvalue() + fd_capture.read().decode(errors="replace")
            news = [line for line in printed.splitlines(keepends=True) if line.rstrip("\n") not in SUBMODULE_LINES]
            if news and err is not None:
                err.write("".join(news))
                err.flush()
    return jaxmarl


jaxmarl = import_jaxmarl()  # once, when the plugin first builds or lists an environment
from jaxmarl.environments import spaces as marl_spaces  # noqa: E402

# Families whose time limit is jaxmarl's own ``max_steps``, and by how many steps their episodes outrun it:
# MPE and SMAX compare the step counter with ``max_steps`` before counting the step (``max_steps=25`` runs 26
# steps). ``max_episode_steps=T`` is T steps on every family; its default keeps jaxmarl's default episodes.
OWN_LIMIT = {"mpe": 1, "smax": 1, "overcooked": 0}
# Families with legal-action masks (``get_avail_actions``, Hanabi's ``get_legal_moves``): each agent's
# observation is ``{"observation", "legal_action_mask"}``.
MASKED = frozenset({"smax", "hanabi"})
# Families whose number of agents jaxmarl bounds (Hanabi asserts 2..5): refused at make with the range.
AGENT_RANGES = {"hanabi": (2, 5)}


class JaxMarlEnvironment(envhub.JaxEnvironment[Any, Any, Any]):
    """One JaxMARL environment on envhub's JAX base: jaxmarl's ``reset`` and ``step_env`` (its auto-reset
    ``step`` is not used: the base resets in the same step). Observations, actions and rewards are dicts
    keyed by ``agents``; ``info["agent_done"]`` keeps jaxmarl's per-agent dones (an SMAX unit that died); SMAX adds
    ``info["world_state"]`` and ``info["won_episode"]`` (``_won``), and keeps jaxmarl's ``num_allies``,
    ``num_enemies`` and ``state_size`` (the size of ``info["world_state"]``) as attributes."""

    def __init__(
        self,
        name: str,
        family: str,
        *,
        num_envs: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        **kwargs: Any,
    ):
        self.name, self.family = name, family
        limit = positive_int("max_episode_steps", kwargs.pop("max_episode_steps", None), none="the env's default")
        extra = OWN_LIMIT.get(self.family)
        if "num_agents" in kwargs:  # jaxmarl takes 0 and fails at init (MPE: ZeroDivisionError), -1 in its make
            positive_int("num_agents", kwargs["num_agents"], where=f"for 'jaxmarl/{name}'")
            low, high = AGENT_RANGES.get(family, (1, None))
            if kwargs["num_agents"] < low or (high is not None and kwargs["num_agents"] > high):
                raise InvalidArgumentError(
                    f"num_agents={kwargs['num_agents']!r} for 'jaxmarl/{name}': {family} is played by {low} to {high} "
                    f"agents; give one in that range."
                )
        self.marl_env = jaxmarl.make(name, **kwargs)
        if not self.marl_env.agents:
            raise InvalidArgumentError(f"'jaxmarl/{name}' made with {kwargs} has no agents: give it at least one.")
        if extra is not None and limit is not None:
            # Set on the built env: the FACMAC variants' constructors take no max_steps, and every family
            # reads the attribute only while stepping.
            _inner(self.marl_env).max_steps = limit - extra
        self.agents = tuple(self.marl_env.agents)
        if family == "smax":  # jaxmarl's SMAX attributes JaxMARL's MAPPO reads (SMAXWorldStateWrapper), via to_jaxmarl
            smax = _inner(self.marl_env)
            self.num_allies, self.num_enemies, self.state_size = smax.num_allies, smax.num_enemies, smax.state_size
        self.time_limit = limit if extra is None else _inner(self.marl_env).max_steps + extra
        base_limit = limit if extra is None else None
        first_obs = jax.eval_shape(self.marl_env.reset, jax.random.key(0))[0]
        obs_spaces = {a: fitted(self.marl_env.observation_space(a), first_obs[a]) for a in self.agents}
        action_spaces = {a: to_envhub_space(self.marl_env.action_space(a)) for a in self.agents}
        if self.family in MASKED:
            obs_spaces = {
                a: {"observation": obs_spaces[a], "legal_action_mask": _mask_space(action_spaces[a])}
                for a in self.agents
            }
        super().__init__(
            observation_space=spaces.Tree(obs_spaces),
            action_space=spaces.Tree(action_spaces),
            num_envs=num_envs,
            max_episode_steps=base_limit,
            reset_mode=reset_mode,
            reset_spares=reset_spares,
        )

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata,
            "time_limit": self.time_limit,
            "agents": self.agents,
            "library": f"jaxmarl {importlib.metadata.version('jaxmarl')}",
        }

    @property
    def render_modes(self) -> tuple[str, ...]:  # type: ignore[override]
        from envhub_jaxmarl.render import drawer

        return ("rgb_array",) if drawer(self.name, self.family) else ()

    def _render(self, state: Any, index: int | None) -> Any:
        from envhub_jaxmarl.render import drawer

        draw = drawer(self.name, self.family)
        if draw is None:
            from envhub.plugin import RenderError

            raise RenderError(
                self.id,
                "envhub draws jaxmarl's MPE, SMAX, coin game, Hanabi and Overcooked environments only",
                "record its observations instead",
            )
        return draw_each(lambda one: draw(self.marl_env, one), jax.device_get(state.env), self.num_envs, index)

    def _reset_one(self, key: jax.Array) -> tuple[Any, Any]:
        obs, state = self.marl_env.reset(key)
        return state, self._observation(obs, state)

    def _step_one(self, key: jax.Array, state: Any, action: Any) -> JaxStep:
        obs, state, rewards, dones, infos = self.marl_env.step_env(key, state, action)
        ended = dones["__all__"]
        terminated = ended & self._terminal(state) if self.family in ("smax", "hanabi") else jnp.zeros_like(ended)
        info = {**infos, "agent_done": {a: dones[a] for a in self.agents}}
        if isinstance(obs, dict) and "world_state" in obs:  # SMAX: the global state, for centralised critics
            info["world_state"] = obs["world_state"]
        if self.family == "smax":
            info["won_episode"] = self._won(state)
        return JaxStep(
            state=state,
            obs=self._observation(obs, state),
            reward={a: rewards[a] for a in self.agents},  # hanabi adds "__all__"
            terminated=terminated,
            truncated=ended & ~terminated,
            info=info,
        )

    def _observation(self, obs: dict[str, Any], state: Any) -> dict[str, Any]:
        own = {a: obs[a] for a in self.agents}  # SMAX adds "world_state"
        if self.family not in MASKED:
            return own
        masks = (
            self.marl_env.get_legal_moves(state) if self.family == "hanabi" else self.marl_env.get_avail_actions(state)
        )
        return {a: {"observation": own[a], "legal_action_mask": masks[a].astype(jnp.bool_)} for a in self.agents}

    def _terminal(self, state: Any) -> jax.Array:
        """Whether the episode ended for a reason other than the time limit."""
        if self.family == "hanabi":
            return jnp.asarray(True)
        allies, enemies = self._sides_alive(state)
        return ~allies | ~enemies

    def _won(self, state: Any) -> jax.Array:
        """SMAX's ``info["won_episode"]``: the allies (the first ``num_allies`` units: HeuristicEnemySMAX's agents)
        won the battle on this step, every enemy unit dead and an ally alive. This is jaxmarl 0.2.0's own win
        condition (``SMAX.compute_reward``: ``won_battle & ~lost_battle``, where it pays ``won_battle_bonus``); such
        a step ends the episode (``terminated``), so the value is True only on an episode's last step. Mava's
        ``SmaxWrapper`` derives it from rewards (``LAST & all(reward >= 1.0)``, its ``log_win_rate``), jaxmarl's
        ``SMAXLogWrapper`` likewise (``reward >= 1.0``). With the default ``won_battle_bonus=1.0`` the rules agree
        on the allies' rewards except on a draw (both sides wiped out on one step) in which every enemy went from full
        health to dead (a damage reward of 1.0); on ``SMAX``, where the enemies are agents too, this is still the
        allies' win."""
        allies, enemies = self._sides_alive(state)
        return allies & ~enemies

    def _sides_alive(self, state: Any) -> tuple[jax.Array, jax.Array]:
        """Whether any ally and whether any enemy unit is alive in SMAX's ``state``."""
        smax, inner = _inner(self.marl_env), getattr(state, "state", state)  # HeuristicEnemySMAX wraps SMAX
        alive = inner.unit_alive
        return jnp.any(alive[: smax.num_allies]), jnp.any(alive[smax.num_allies :])


def env_classes(name: str) -> list[type]:
    """The classes whose constructor ``jaxmarl.make(name)`` passes its kwargs to (HeuristicEnemySMAX: on to SMAX)."""
    env = jaxmarl.make(name)
    return [type(env), *([type(env._env)] if hasattr(env, "_env") else [])]


def default_time_limit(name: str, family: str) -> int | None:
    """Steps per episode of ``make("jaxmarl/<name>")`` without ``max_episode_steps`` (None: no limit)."""
    extra = OWN_LIMIT.get(family)
    return None if extra is None else int(_inner(jaxmarl.make(name)).max_steps) + extra


def to_envhub_space(space: Any) -> spaces.Space:
    """Convert a jaxmarl space to an envhub space with the same dtype."""
    if isinstance(space, marl_spaces.Discrete):
        return spaces.Discrete(int(space.n), dtype=space.dtype)
    if isinstance(space, marl_spaces.MultiDiscrete):
        return spaces.MultiDiscrete(np.asarray(space.num_categories), dtype=space.dtype)
    if isinstance(space, marl_spaces.Box):
        return spaces.Box(np.asarray(space.low), np.asarray(space.high), np.atleast_1d(space.shape), space.dtype)
    if isinstance(space, marl_spaces.Dict):
        return spaces.Tree({k: to_envhub_space(v) for k, v in space.spaces.items()})
    if isinstance(space, marl_spaces.Tuple):
        return spaces.Tree(tuple(to_envhub_space(v) for v in space.spaces))
    raise TypeError(f"envhub-jaxmarl cannot convert the jaxmarl space {space!r}")


def fitted(space: Any, observation: jax.ShapeDtypeStruct) -> spaces.Space:
    """The envhub space of an observation jaxmarl declares ``space`` for. Some jaxmarl 0.2.0 Boxes do not
    describe their observations (Overcooked: (5, 4, 26) float32 for (4, 5, 26) uint8 grids): a Box takes the
    observation's shape and dtype, and keeps jaxmarl's bounds where they fit that shape."""
    if not isinstance(space, marl_spaces.Box):
        return to_envhub_space(space)
    shape, dtype = tuple(observation.shape), np.dtype(observation.dtype)
    low, high = np.asarray(space.low), np.asarray(space.high)
    try:
        np.broadcast_to(low, shape), np.broadcast_to(high, shape)
    except ValueError:
        low, high = (False, True) if dtype.kind == "b" else (-np.inf, np.inf)
    return spaces.Box(low, high, shape, dtype)


def _mask_space(action_space: spaces.Space) -> spaces.Box:
    return spaces.Box(False, True, (int(action_space.n),), np.bool_)


def _inner(env: Any) -> Any:
    """The SMAX env inside HeuristicEnemySMAX (``_env``), or the env itself."""
    return getattr(env, "_env", env)
