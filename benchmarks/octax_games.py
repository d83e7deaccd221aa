"""envhub's octax backend vs octax's own loop: a random key (or none) per game, jitted lax.scan, batched with vmap.

The raw loop is how octax's games are trained (octax.agents, through octax.wrappers.OctaxGymnaxWrapper and gymnax's
auto-reset): ``jax.vmap`` of octax's ``step``, and of its ``reset`` on every step, a finished game replaced by the
fresh one with a ``select`` (without the wrapper's transpose of the observation), in ``lax.scan``. envhub runs
with its defaults: real resets from spare initial states (made ``num_envs`` at a time, envhub.native.resets), and
the reached observation kept in ``final_obs``. Both loops do the same
work per step: split the key, draw a uniform action per game, step every game, add up the rewards and the game
ends. The games differ after the first end (the new games start from different keys), so the end counts are
close, not always equal.

    python benchmarks/octax_games.py [--games brix,pong,...] [--num-envs 1024] [--steps 200] [--repeats 5]
        [--json out.json]
"""

from __future__ import annotations

import importlib.metadata

import jax
from _timing import comparison_cli, envhub_random_rollout, raw_random_rollout

import envhub
from envhub.core.tree import select

# A paddle game, a puzzle, a level of a family, a shooter with a startup, and the longest startup (blinky).
GAMES = "brix,pong,tetris,cavern1,space_flight1,airplane,blinky"


def raw_octax_rollout(name: str, num_envs: int, steps: int):
    from envhub_octax.games import import_octax

    import_octax()  # octax 0.1.1 cannot be imported without cv2 otherwise (envhub_octax.games says why)
    from octax.environments import create_environment

    game, _ = create_environment(name)
    reset, step = jax.vmap(game.reset), jax.vmap(game.step)

    def step_all(reset_key, state, action):
        state, _, reward, terminated, truncated, _ = step(state, action)
        done = terminated | truncated
        return select(done, reset(jax.random.split(reset_key, num_envs))[0], state), reward, done

    return raw_random_rollout(lambda keys: reset(keys)[0], step_all, num_envs, game.num_actions, steps)


def envhub_rollout(name: str, num_envs: int, steps: int):
    return envhub_random_rollout(envhub.make(f"octax/{name}", num_envs=num_envs), steps)


def main() -> None:
    comparison_cli(
        __doc__,
        "octax",
        ("games", GAMES),
        raw_octax_rollout,
        envhub_rollout,
        lambda a: (
            f"{a.num_envs} games, {a.steps} scan steps, a uniform random action each, median of {a.repeats} "
            f"interleaved repeats (jax {jax.__version__}, octax {importlib.metadata.version('octax')}, "
            f"{jax.devices()[0].platform})"
        ),
    )


if __name__ == "__main__":
    main()
