"""Draw one state of a jaxmarl environment (every runnable family) as uint8 RGB pixels, off screen.

MPE: jaxmarl's own ``MPEVisualizer`` opens a pyplot window and prints; this draws the same circles (positions,
radii and colours of the env's entities) on an off-screen matplotlib canvas. SMAX: the living units as its
visualizer's circles (allies blue, enemies green; its shot markers need the step's actions, so not drawn).
Overcooked: the tiles of jaxmarl's ``OvercookedVisualizer`` (v2: ``OvercookedV2Visualizer``), as its ``animate``
draws each frame (no window).
Coin game: the two agents and their coins on its 3x3 grid (jaxmarl 0.2.0's own ``render`` of it calls
matplotlib's ``tostring_rgb``, removed in matplotlib 3.10).
Hanabi: jaxmarl's ``render`` prints the game as text; the same facts (tokens, fireworks, discards, each hand
with its hints) are written as text lines on an off-screen canvas.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np


def drawer(name: str, family: str) -> Callable[[Any, Any], np.ndarray] | None:
    """The function drawing a state of jaxmarl ``name`` (of ``family``), or None: every runnable family draws
    (MPE, SMAX, the coin game, Hanabi, Overcooked v1 and v2)."""
    by_family = {"mpe": draw_mpe, "smax": draw_smax, "coin_game": draw_coin_game, "hanabi": draw_hanabi}
    by_name = {"overcooked": draw_overcooked, "overcooked_v2": draw_overcooked_v2}
    return by_family.get(family) or by_name.get(name)


def _circles(extent: tuple[float, float, float, float], circles: list[tuple[Any, float, Any]], text: str,
             size: float = 4.0, dpi: int = 64) -> np.ndarray:  # fmt: skip
    """Filled ``(centre, radius, colour)`` circles over ``extent`` (x0, x1, y0, y1), ``text`` in the top left."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Circle

    fig = Figure(figsize=(size, size), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(extent[0], extent[1])
    ax.set_ylim(extent[2], extent[3])
    ax.set_xticks([])
    ax.set_yticks([])
    for centre, radius, colour in circles:
        ax.add_patch(Circle(tuple(np.asarray(centre)), float(radius), color=colour))
    x0, x1, y0, y1 = extent
    ax.text(x0 + 0.01 * (x1 - x0), y1 - 0.01 * (y1 - y0), text, va="top")
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def draw_mpe(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one MPE ``state`` of ``marl_env``: the arena from -2 to 2, 256 px a side."""
    positions, radii = np.asarray(state.p_pos), np.asarray(marl_env.rad)
    circles = [(positions[i], radii[i], np.asarray(marl_env.colour[i]) / 255) for i in range(marl_env.num_entities)]
    return _circles((-2, 2, -2, 2), circles, f"step {int(state.step)}")


def draw_smax(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one SMAX ``state``: the living units on the map, allies blue, enemies green."""
    smax, inner = getattr(marl_env, "_env", marl_env), getattr(state, "state", state)  # HeuristicEnemySMAX wraps
    radii = np.asarray(smax.unit_type_radiuses)[np.asarray(inner.unit_types)]
    positions, alive = np.asarray(inner.unit_positions), np.asarray(inner.unit_alive)
    circles = [
        (positions[i], radii[i], "blue" if i < smax.num_allies else "green") for i in range(len(alive)) if alive[i]
    ]
    return _circles((0, smax.map_width, 0, smax.map_height), circles, f"step {int(inner.step)}")


#: The coin game's drawing: its agents, then their (smaller) coins on top, at the cells' centres.
COIN_GAME = (("red_pos", 0.4, (1.0, 0.0, 0.0)), ("blue_pos", 0.4, (0.0, 0.0, 1.0)),
             ("red_coin_pos", 0.2, (1.0, 0.6, 0.6)), ("blue_coin_pos", 0.2, (0.6, 0.6, 1.0)))  # fmt: skip


def draw_coin_game(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one coin game ``state``: the agents (red, blue) and coins (light red, light blue)."""
    circles = [(np.asarray(getattr(state, field)) + 0.5, radius, colour) for field, radius, colour in COIN_GAME]
    return _circles((0, 3, 0, 3), circles, f"step {int(state.step)}")


def draw_overcooked(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one Overcooked ``state``: the kitchen's tiles, 32 pixels each."""
    from jaxmarl.viz.overcooked_visualizer import TILE_PIXELS, OvercookedVisualizer

    padding = marl_env.agent_view_size - 2  # the maze map is padded for the agents' views
    grid = np.asarray(state.maze_map[padding:-padding, padding:-padding, :])
    frame = OvercookedVisualizer._render_grid(
        grid,
        tile_size=TILE_PIXELS,
        agent_dir_idx=np.asarray(state.agent_dir_idx),
        agent_inv=np.asarray(state.agent_inv),
    )
    return np.asarray(frame, np.uint8)


@functools.cache
def _v2_visualizer() -> Any:
    """One ``OvercookedV2Visualizer`` per process: its drawing is a jitted method with the visualizer static,
    so one instance compiles it once per kitchen shape (2 s on 2 cores), not once per frame."""
    from jaxmarl.viz.overcooked_v2_visualizer import OvercookedV2Visualizer

    return OvercookedV2Visualizer()


def draw_overcooked_v2(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one Overcooked v2 ``state``: jaxmarl's own ``OvercookedV2Visualizer`` tiles, 32 pixels
    each (what its ``animate`` draws per frame, without a window)."""
    return np.asarray(_v2_visualizer()._render_state(state), np.uint8)


#: Hanabi's text: DejaVu Sans Mono at 10 pt on a 72 dpi canvas (a point is a pixel): ~6.1 px a character,
#: 12.5 px a line, 84 characters wide (the longest line, five colours of discards, has 79).
HANABI_FONT, HANABI_CHAR, HANABI_LINE, HANABI_WIDTH = 10, 6.1, 12.5, 84


def draw_hanabi(marl_env: Any, state: Any) -> np.ndarray:
    """One uint8 RGB frame of one Hanabi ``state``: ``hanabi_lines`` in black on white; its size depends only
    on the players and hand size, so the frames of an episode stack into a GIF."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    lines = hanabi_lines(marl_env, state)
    width, height = HANABI_WIDTH * HANABI_CHAR + 16, len(lines) * HANABI_LINE + 16
    fig = Figure(figsize=(width / 72, height / 72), dpi=72, facecolor="white")
    canvas = FigureCanvasAgg(fig)
    text = "\n".join(lines)
    spacing = HANABI_LINE / HANABI_FONT
    fig.text(8 / width, 1 - 8 / height, text, family="monospace", fontsize=HANABI_FONT, va="top", linespacing=spacing)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def hanabi_lines(marl_env: Any, state: Any) -> list[str]:
    """The facts jaxmarl's Hanabi ``render`` prints: turn, score, tokens, deck, fireworks, discards, and each
    player's hand: a card, the hints it got (X: none) and the colours and ranks it may still be."""
    colours = list(marl_env.color_map)
    ranks = [str(r + 1) for r in range(marl_env.num_ranks)]

    def card(one_hot: Any) -> str:  # (colours, ranks) one-hot; "--" for an empty slot
        one_hot = np.asarray(one_hot)
        if not one_hot.any():
            return "--"
        return colours[one_hot.any(axis=1).argmax()] + ranks[one_hot.any(axis=0).argmax()]

    def hinted(revealed: Any, names: list[str]) -> str:
        return names[int(np.argmax(revealed))] if np.any(revealed) else "X"

    fireworks = np.asarray(state.fireworks)  # a firework's ranks are played in order: its height is their count
    discarded = np.asarray(state.discard_pile)[: int(state.num_cards_discarded)]
    piles = {c: "".join(card(d)[1] for d in discarded if card(d)[0] == c) for c in colours}
    to_play = int(np.argmax(np.asarray(state.cur_player_idx)))
    lines = [
        f"Turn {int(state.step)}  Score {int(state.score)}  Information {int(np.sum(state.info_tokens))}  "
        f"Lives {int(np.sum(state.life_tokens))}  Deck {int(np.sum(state.deck))}",
        "Fireworks: " + " ".join(f"{c}{int(n)}" for c, n in zip(colours, fireworks.sum(axis=1))),
        "Discards:  " + ("  ".join(f"{c} {''.join(sorted(p))}" for c, p in piles.items() if p) or "none"),
    ]
    shape = (marl_env.hand_size, marl_env.num_colors, marl_env.num_ranks)
    for player in range(marl_env.num_agents):
        lines.append(f"Player {player}" + ("  <- to play" if player == to_play else ""))
        knowledge = np.asarray(state.card_knowledge[player]).reshape(shape)
        for slot in range(marl_env.hand_size):
            maybe = knowledge[slot]
            colour_hint = hinted(state.colors_revealed[player][slot], colours)
            rank_hint = hinted(state.ranks_revealed[player][slot], ranks)
            lines.append(
                f"  {slot} {card(state.player_hands[player][slot])}  hinted {colour_hint}{rank_hint}  may be "
                + "".join(c for c, k in zip(colours, maybe.any(axis=1)) if k)
                + " "
                + "".join(r for r, k in zip(ranks, maybe.any(axis=0)) if k)
            )
    return lines
