"""An example envhub backend: one JAX-native environment, registered through one hook.

Keep this module light: import your backend library inside the factories, never at the top,
so that `import envhub` and `envhub list` stay fast. Everything a plugin uses from envhub comes
from `envhub.plugin` (the plugin API, kept stable), nothing from envhub's other modules.
"""

from __future__ import annotations

from typing import Any

from envhub.plugin import Environment, Kwarg, check_options_for, hookimpl, jax_kwargs

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1


@hookimpl
def envhub_register_envs(register: Any) -> None:
    """Tell envhub which environments this backend offers."""
    for name in ("Chain-v0",):
        register(
            name,
            make_chain,
            batching="native",  # the factory takes num_envs: JaxEnvironment batches inside
            description="walk right along a slippery chain",
            check_options=check_options_for(CHECK_OPTIONS, name),
            kwargs=KWARGS,  # or a function returning them, called by make (it may import your library)
        )


# How the conformance kit drives each env (fields of envhub.testing.Options; "*" applies to all).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {"*": {"time_limit_kwarg": "max_episode_steps"}}


# The keyword arguments make() accepts, checked before the factory runs: an unknown name or a wrong
# type is an envhub.EnvKwargsError listing these (and `envhub info` shows them). Types are Python
# types or annotations (int, float, bool, str, X | None, Literal[...], tuple[float, ...], typing.Any).
KWARGS: dict[str, Kwarg] = {
    "length": Kwarg(int, 8, "cells in the chain", bounds=(2, None)),  # make refuses a value outside, naming it
    "slip": Kwarg(float, 0.1, "probability that a move goes the other way", bounds=(0.0, 1.0)),
    # what JaxEnvironment owns: max_episode_steps (the time limit), reset_mode and reset_spares. A backend
    # with its own name for the time limit declares it as an alias: jax_kwargs(50, native="its_name").
    **jax_kwargs(50),
}


def make_chain(**kwargs: Any) -> Environment[Any, Any, Any]:
    from envhub_mybackend.chain import Chain  # the heavy import happens here, on first make

    return Chain(**kwargs)
