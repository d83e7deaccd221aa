"""``PgxEnvironment``: a Pgx game behind the envhub API (docs/multi-agent.md, turn-based games)."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pgx

import envhub
from envhub.plugin import JaxStep, draw_each, spaces

# What each id fixes of its pgx class's constructor, so `make` does not take it: Go's size (pgx.make passes it),
# and Hex's, which pgx 2.6.0 declares but cannot change (another size fails reshaping its 11x11 board).
PRESET: dict[str, dict[str, Any]] = {"go_9x9": {"size": 9}, "go_19x19": {"size": 19}, "hex": {"size": 11}}

# Games whose init draws nothing but who moves first: resetting the finished ones in place is cheaper than
# keeping spare initial states (a copy of a large board per step), 3-8 % faster at 1024 games; games that
# deal, shuffle or place at random (poker, mahjong, backgammon, 2048, MinAtar) keep spares, 1.1-7x faster
# (benchmarks/pgx_games.py, README "Resets").
PLAIN_START = frozenset(
    {
        "animal_shogi",
        "chess",
        "connect_four",
        "gardner_chess",
        "go_9x9",
        "go_19x19",
        "hex",
        "othello",
        "shogi",
        "tic_tac_toe",
    }
)


class PgxEnvironment(envhub.JaxEnvironment[Any, Any, Any]):
    """One Pgx game on envhub's JAX base: pgx's ``init``/``step`` (no auto-reset: the base resets in the
    same step). The observation is ``{"observation", "legal_action_mask", "current_player"}``: the board
    as the player to move sees it, the moves that are legal, and whose move it is. A game of two or more
    players lists them in ``agents`` (``player_0`` ... in pgx's player ids) and rewards each; a
    one-player game (2048, MinAtar) has one reward. pgx's ``terminated`` is the game's end (an illegal
    move ends it too, with pgx's penalty for the player who made it); envhub's time limit truncates.
    ``render`` draws pgx's SVG of a state as RGB (``envhub_pgx.render``; boards need the ``render`` extra).
    """

    render_modes = ("rgb_array",)

    def __init__(
        self,
        name: str,
        *,
        num_envs: int | None = None,
        max_episode_steps: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        **kwargs: Any,
    ):
        self.name = name
        self.game = game_class(name)(**PRESET.get(name, {}), **kwargs)
        state = jax.eval_shape(self.game.init, jax.random.key(0))
        players = int(self.game.num_players)
        self.agents = tuple(f"player_{i}" for i in range(players)) if players > 1 else ()
        obs = state.observation
        observation_space = spaces.Tree(
            {
                "observation": spaces.Box(*_widest(obs.dtype), obs.shape, obs.dtype),
                "legal_action_mask": spaces.Box(False, True, state.legal_action_mask.shape, np.bool_),
                "current_player": spaces.Discrete(max(players, 1), dtype=np.int32),
            }
        )
        super().__init__(
            observation_space=observation_space,
            action_space=spaces.Discrete(int(state.legal_action_mask.shape[0]), dtype=np.int32),
            num_envs=num_envs,
            max_episode_steps=max_episode_steps,
            reset_mode=reset_mode,
            reset_spares=name not in PLAIN_START if reset_spares is None else reset_spares,
        )

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata,
            "agents": self.agents,
            "library": f"pgx {importlib.metadata.version('pgx')} ({self.name} {self.game.version})",
        }

    def _render(self, state: Any, index: int | None) -> Any:
        from envhub_pgx.render import draw

        return draw_each(lambda one: draw(self.id, self.name, one), jax.device_get(state.env), self.num_envs, index)

    def _reset_one(self, key: jax.Array) -> tuple[Any, Any]:
        state = self.game.init(key)
        return state, observation(state)

    def _step_one(self, key: jax.Array, state: Any, action: Any) -> JaxStep:
        # Chance games (2048, backgammon, MinAtar) draw from the key; the others ignore it.
        state = self.game.step(state, action, key)
        return JaxStep(
            state=state,
            obs=observation(state),
            reward=self._rewards(state.rewards),
            terminated=state.terminated,
            truncated=state.truncated,
            info={},
        )

    def _rewards(self, rewards: jax.Array) -> Any:
        """pgx's rewards (one per player id) as envhub's: a dict per agent, or one reward in a one-player game."""
        if not self.agents:
            return rewards[0]
        return {agent: rewards[i] for i, agent in enumerate(self.agents)}


def observation(state: Any) -> dict[str, jax.Array]:
    """What a policy of the player to move sees: pgx's observation, the legal moves and whose move it is."""
    return {
        "observation": state.observation,
        "legal_action_mask": state.legal_action_mask,
        "current_player": jnp.asarray(state.current_player, jnp.int32),
    }


def game_class(name: str) -> type:
    """The pgx class ``pgx.make(name)`` builds (built once, cheaply: pgx games hold no arrays until ``init``)."""
    return type(pgx.make(name))


def _widest(dtype: Any) -> tuple[Any, Any]:
    return (False, True) if np.dtype(dtype).kind == "b" else (-np.inf, np.inf)
