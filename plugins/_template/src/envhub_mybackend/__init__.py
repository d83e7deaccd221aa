"""An example envhub backend: one JAX-native environment, registered through one hook.

Keep this module light: import your backend library inside the factories, never at the top,
so that `import envhub` and `envhub list` stay fast.
"""

from __future__ import annotations

from typing import Any

import envhub

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Tell envhub which environments this backend offers."""
    register(
        "Chain-v0",
        make_chain,
        description="walk right along a slippery chain",
        check_options={"time_limit_kwarg": "max_steps"},  # how the conformance kit sets a time limit
    )


def make_chain(**kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    from envhub_mybackend.chain import Chain  # the heavy import happens here, on first make

    return Chain(**kwargs)
