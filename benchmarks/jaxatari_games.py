"""envhub's jaxatari backend vs jaxtari's own loop: a random action per game, jitted lax.scan, batched with vmap.

The raw loop is the plain JAX one for jaxtari's games (which have no auto-reset of their own): ``jax.vmap`` of
``game.step``, and where a game is done, ``game.reset`` with a fresh key, chosen with ``jnp.where`` (under vmap
both branches run for every game on every step), in ``lax.scan``. envhub runs with its defaults: object-centric
observations, real resets from spare initial states (envhub.native.resets), the final observation kept in
``final_obs``. Both loops do the same work per step: split the key, draw an action per game, step every game,
add up the rewards and the game ends. Where jaxtari's sprite pack is not installed, the games are built on the
placeholder sprites of plugins/envhub-jaxatari/tests (same game logic, flat-coloured sprites; the headline says so).

    python benchmarks/jaxatari_games.py [--games pong,freeway,...] [--num-envs 1024]
        [--steps 200] [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import tempfile
from pathlib import Path

import jax
from _timing import comparison_cli, envhub_random_rollout, raw_random_rollout
from jaxtari.paths import ownership_or_alt_markers_present

import envhub
from envhub.core.tree import select

GAMES = "pong,freeway,breakout,seaquest,kangaroo"
PLACEHOLDERS = not ownership_or_alt_markers_present()


def use_placeholder_sprites() -> None:
    """Point jaxtari at a temporary placeholder sprite pack (the plugin's tests write it)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins" / "envhub-jaxatari" / "tests"))
    from test_jaxatari import write_placeholder_pack

    root = Path(tempfile.mkdtemp(prefix="jaxtari-sprites-"))
    write_placeholder_pack(root / "jaxtari")
    os.environ["XDG_DATA_HOME"] = str(root)


def raw_jaxtari_rollout(name: str, num_envs: int, steps: int):
    import jaxtari

    game = jaxtari.make(name)
    reset, step = jax.vmap(game.reset), jax.vmap(game.step)

    def step_all(reset_key, state, action):
        _, state, reward, done, _ = step(state, action)
        return select(done, reset(jax.random.split(reset_key, num_envs))[1], state), reward, done

    return raw_random_rollout(lambda keys: reset(keys)[1], step_all, num_envs, int(game.action_space().n), steps)


def envhub_rollout(name: str, num_envs: int, steps: int):
    return envhub_random_rollout(envhub.make(f"jaxatari/{name}", num_envs=num_envs), steps)


def main() -> None:
    if PLACEHOLDERS:
        use_placeholder_sprites()
    comparison_cli(
        __doc__,
        "jaxatari",
        ("games", GAMES),
        raw_jaxtari_rollout,
        envhub_rollout,
        lambda a: (
            f"{a.num_envs} games, {a.steps} scan steps, a random action each, median of {a.repeats} interleaved "
            f"repeats (jax {jax.__version__}, jaxtari {importlib.metadata.version('jaxtari')}, "
            f"{jax.devices()[0].platform}{', placeholder sprites' if PLACEHOLDERS else ''})"
        ),
    )


if __name__ == "__main__":
    main()
