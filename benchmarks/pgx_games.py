"""envhub's pgx backend vs pgx's own loop: a random legal move per game, jitted lax.scan, batched with vmap.

The raw loop is what pgx's README trains with: ``jax.vmap`` of ``pgx.experimental.auto_reset(env.step,
env.init)`` (a game that ends is replaced by ``init`` in the same step; under vmap its ``lax.cond`` runs
``init`` for every game on every step) and ``lax.scan``. envhub runs with its defaults: real resets, from spare initial states
(made ``num_envs`` at a time, envhub.native.resets) for games that draw at init, in place for the others
(envhub_pgx.environment.PLAIN_START), and the final position kept in ``final_obs``. Both loops do the same work per step: split the key, draw a legal move per game from the
mask, step every game, add up the rewards and the game ends. The games differ after the first end (the
new games start from different keys), so the end counts are close, not equal.

    python benchmarks/pgx_games.py [--games tic_tac_toe,connect_four,...] [--num-envs 1024]
        [--steps 200] [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pgx
from _timing import comparison_cli
from pgx.experimental import auto_reset

import envhub

# Board games (init draws only who moves first), games with chance (deals, dice, spawns) and one-player ones.
GAMES = "tic_tac_toe,connect_four,othello,hex,animal_shogi,go_9x9,backgammon,kuhn_poker,sparrow_mahjong,2048,minatar-breakout"


def legal_move(key, mask):
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)


def raw_pgx_rollout(name: str, num_envs: int, steps: int):
    game = pgx.make(name)
    init = jax.vmap(game.init)
    step = jax.vmap(auto_reset(game.step, game.init))

    def run(key):
        init_key, key = jax.random.split(key)
        state = init(jax.random.split(init_key, num_envs))

        def body(carry, key):
            state, total, ends = carry
            action_key, step_key = jax.random.split(key)
            state = step(state, legal_move(action_key, state.legal_action_mask), jax.random.split(step_key, num_envs))
            return (state, total + state.rewards.sum(), ends + state.terminated.sum()), None

        (_, total, ends), _ = jax.lax.scan(body, (state, 0.0, 0), jax.random.split(key, steps))
        return total, ends

    return run


def envhub_rollout(name: str, num_envs: int, steps: int):
    env = envhub.make(f"pgx/{name}", num_envs=num_envs)

    def run(key):
        init_key, key = jax.random.split(key)
        state, ts = env.init(init_key)

        def body(carry, key):
            state, mask, total, ends = carry
            action_key, step_key = jax.random.split(key)
            state, ts = env.step(step_key, state, legal_move(action_key, mask))
            reward = sum(jax.tree.leaves(ts.reward))  # every player's (one array in a one-player game)
            return (state, ts.obs["legal_action_mask"], total + reward.sum(), ends + ts.done.sum()), None

        carry = (state, ts.obs["legal_action_mask"], 0.0, 0)
        (_, _, total, ends), _ = jax.lax.scan(body, carry, jax.random.split(key, steps))
        return total, ends

    return run


def main() -> None:
    comparison_cli(
        __doc__,
        "pgx",
        ("games", GAMES),
        raw_pgx_rollout,
        envhub_rollout,
        lambda a: (
            f"{a.num_envs} games, {a.steps} scan steps, a random legal move each, median of {a.repeats} "
            f"interleaved repeats (jax {jax.__version__}, pgx {pgx.__version__}, {jax.devices()[0].platform})"
        ),
    )


if __name__ == "__main__":
    main()
