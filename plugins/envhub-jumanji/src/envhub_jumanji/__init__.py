"""envhub backend for jumanji: every environment of jumanji's registry, pure JAX, on envhub's JAX base.

jumanji is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import envhub
import envhub.plugin

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# Environments whose constructor cannot run offline, with the reason `make` reports.
UNAVAILABLE = {
    "Sokoban-v0": "its default generator downloads the Boxoban levels from the Hugging Face hub, which envhub "
    "does not do; pass your own generator to jumanji.make('Sokoban-v0', generator=...) and wrap it yourself",
}

# Sizes and counts of jumanji's constructors (an int each): 0 or less ends in an IndexError or a negative
# shape inside jumanji, so make refuses them with the range (jumanji's own checks, e.g. Tetris's >= 4, stay).
# A board side of 1 runs but is no game: Snake's 1x1 puts the fruit on the head, and 2048's 1x1 is full at
# reset; both mask every action (per-kwarg bounds cannot tell 1x1 from 1xN, so a side is at least 2).
# A side is at most MAX_SIDE: far above any real board (a 2048x2048 Snake, Tetris or 2048 steps in under 1 GB),
# and a typo such as num_rows=10**9 is refused by make instead of allocating until memory runs out.
MAX_SIDE = 2048
BOUNDS: dict[str, envhub.plugin.Range] = {
    **dict.fromkeys(("num_rows", "num_cols", "board_size"), (2, MAX_SIDE)),
    "obs_num_ems": (1, None),
}

# How the conformance kit must drive some environments (fields of envhub.testing.Options).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    "*": {"time_limit_kwarg": "max_episode_steps"},
}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every id in jumanji's registry (importing jumanji registers them; nothing is built)."""
    import jumanji

    for name in sorted(jumanji.registered_environments()):
        if name in UNAVAILABLE:
            register(name, None, unavailable=UNAVAILABLE[name])
            continue
        register(
            name,
            functools.partial(make_jumanji_env, name),
            batching="native",
            description="jumanji (JAX-native)",
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(accepted_kwargs, name),
        )


def make_jumanji_env(name: str, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build jumanji ``name``: ``num_envs``, ``max_episode_steps`` (jumanji's ``time_limit`` is an alias)
    and ``reset_mode``/``reset_spares`` go to envhub; the other kwargs to jumanji's constructor."""
    from envhub_jumanji.environment import JumanjiEnvironment

    return JumanjiEnvironment(name, **kwargs)


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("jumanji/<name>", ...)`` takes: jumanji's constructor arguments and envhub's."""
    from jumanji import registration

    spec = registration._REGISTRY[name]  # what jumanji.make reads
    table, _ = envhub.plugin.from_signature(registration.load(spec.entry_point))
    for kwarg, bounds in BOUNDS.items():
        if kwarg in table and table[kwarg].type is int:
            table[kwarg] = dataclasses.replace(table[kwarg], bounds=bounds)
    limit = table.pop("time_limit", None)
    default = None if limit is None or not isinstance(limit.default, int) else limit.default
    return {**table, **envhub.plugin.jax_kwargs(default, native="time_limit" if limit else "")}
