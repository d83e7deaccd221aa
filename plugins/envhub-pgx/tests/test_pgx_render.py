"""envhub-pgx rendering: pgx's SVG rasterised (pieces appear where they were played; a batch draws each game),
MinAtar's grid from its observation, and the RenderError where cairosvg or the cairo library is missing."""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub.plugin import RenderError


def _cairo_missing() -> str | None:
    """Why boards cannot be rasterised here (cairosvg imports libcairo, a system library), or None."""
    try:
        import cairosvg  # noqa: F401
    except (ImportError, OSError) as exc:
        return f"rasterising pgx's SVG needs cairosvg and the cairo system library: {exc}"
    return None


needs_cairo = pytest.mark.skipif(_cairo_missing() is not None, reason=str(_cairo_missing()))


def changed(before, after):
    """The bounding box ``(row0, col0, row1, col1)`` of the pixels that differ between two frames."""
    rows, cols = np.nonzero((before != after).any(axis=-1))
    assert rows.size, "the frame did not change"
    return rows.min(), cols.min(), rows.max(), cols.max()


def inside(box, top, left, size):
    """Whether ``box`` lies within the square cell of ``size`` pixels at ``(top, left)``."""
    return top <= box[0] and box[2] < top + size and left <= box[1] and box[3] < left + size


@needs_cairo
def test_tic_tac_toe_draws_each_move_in_its_cell_and_each_game_of_a_batch():
    """pgx 2.6.0's tic-tac-toe: 60 px cells after a 30 px margin, 240 px a side; cell k at row k // 3, col k % 3."""
    env = envhub.make("pgx/tic_tac_toe", num_envs=2)
    assert env.render_modes == ("rgb_array",)
    state, _ = env.init(jax.random.key(0))
    empty = env.render(state)
    assert empty.shape == (2, 240, 240, 3) and empty.dtype == np.uint8
    np.testing.assert_array_equal(empty[0], empty[1])  # two empty boards
    frames = [empty]
    for moves in ([4, 0], [0, 8]):  # game 0: centre, then top left; game 1: top left, then bottom right
        state, _ = env.step(jax.random.key(1), state, jnp.array(moves, jnp.int32))
        frames.append(env.render(state))
    for game, moves in enumerate(([4, 0], [0, 8])):
        for t, cell in enumerate(moves):
            box = changed(frames[t][game], frames[t + 1][game])
            assert inside(box, 30 + 60 * (cell // 3), 30 + 60 * (cell % 3), 60), (game, cell, box)
    assert not np.array_equal(frames[-1][0], frames[-1][1])
    alone = envhub.make("pgx/tic_tac_toe")
    for i in range(2):  # index=i draws game i, as the unbatched env draws that game's state
        np.testing.assert_array_equal(env.render(state, index=i), frames[-1][i])
        np.testing.assert_array_equal(alone.render(jax.tree.map(lambda x, i=i: x[i], state)), frames[-1][i])


@needs_cairo
def test_connect_four_pieces_fall_to_the_bottom_of_their_column():
    """pgx 2.6.0's connect four: 35 px cells after a 17.5 px margin, 6 rows of 7, 280 px a side."""
    env = envhub.make("pgx/connect_four")
    state, _ = env.init(jax.random.key(0))
    before = env.render(state)
    assert before.shape == (280, 280, 3) and before.dtype == np.uint8
    for column, row in ((3, 5), (3, 4), (0, 5)):  # the second piece in column 3 lands on the first
        state, _ = env.step(jax.random.key(1), state, jnp.int32(column))
        after = env.render(state)
        assert inside(changed(before, after), 17 + 35 * row, 17 + 35 * column, 36), (column, row)
        before = after


@needs_cairo
def test_2048_draws_each_games_tiles():
    env = envhub.make("pgx/2048", num_envs=2)
    state, _ = env.init(jax.random.key(0))
    frames = env.render(state)
    assert frames.shape == (2, 250, 250, 3) and frames.dtype == np.uint8
    boards = np.asarray(state.env._board)  # log2 of each tile, 0 for none: two random tiles per game
    assert not np.array_equal(boards[0], boards[1])
    assert not np.array_equal(frames[0], frames[1])
    np.testing.assert_array_equal(env.render(state, index=1), frames[1])


def test_minatar_draws_its_grid_without_cairosvg(monkeypatch):
    """Breakout's first state: bricks in rows 1-3, the paddle at row 9, column 4; 32 px cells, black when empty."""
    from envhub_pgx.render import MINATAR_CELL, palette

    monkeypatch.setitem(sys.modules, "cairosvg", None)
    env = envhub.make("pgx/minatar-breakout")
    state, _ = env.init(jax.random.key(0))
    frame = env.render(state)
    assert frame.shape == (320, 320, 3) and frame.dtype == np.uint8
    colours = (palette(4) * 255).round().astype(np.uint8)  # black, then paddle, ball, trail, brick
    centres = frame[MINATAR_CELL // 2 :: MINATAR_CELL, MINATAR_CELL // 2 :: MINATAR_CELL]
    np.testing.assert_array_equal(centres[1:3], np.broadcast_to(colours[4], (2, 10, 3)))
    np.testing.assert_array_equal(centres[9, 4], colours[1])
    np.testing.assert_array_equal(centres[4:9], np.zeros((5, 10, 3), np.uint8))
    assert len({tuple(c) for c in colours}) == 5


def test_boards_without_cairosvg_or_cairo_say_what_to_install(monkeypatch):
    env = envhub.make("pgx/tic_tac_toe")
    state, _ = env.init(jax.random.key(0))
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # not installed
    with pytest.raises(RenderError, match=r"'pgx/tic_tac_toe'.*'cairosvg'.*pip install \"envhub-pgx\[render\]\""):
        env.render(state)

    class NoCairo:  # cairosvg installed, but cairocffi finds no libcairo: its import raises OSError
        def find_spec(self, name, path=None, target=None):
            if name == "cairosvg":
                raise OSError("no library called 'cairo-2' was found")

    monkeypatch.delitem(sys.modules, "cairosvg")
    monkeypatch.setattr(sys, "meta_path", [NoCairo(), *sys.meta_path])
    with pytest.raises(RenderError, match=r"'pgx/tic_tac_toe'.*cairo system library.*apt install libcairo2"):
        env.render(state)


@needs_cairo
def test_pettingzoo_aec_export_renders_the_board_after_each_move():
    """The AEC export's render draws the game's current board: the centre move appears in the centre cell."""
    aec = envhub.interop.to_pettingzoo_aec(envhub.make("pgx/tic_tac_toe"), render_mode="rgb_array")
    assert aec.metadata["render_modes"] == ["rgb_array"]
    aec.reset()
    empty = aec.render()
    assert empty.shape == (240, 240, 3) and empty.dtype == np.uint8
    aec.step(4)
    assert inside(changed(empty, aec.render()), 90, 90, 60)
