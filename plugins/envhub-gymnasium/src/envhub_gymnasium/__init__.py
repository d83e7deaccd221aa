"""envhub backend for gymnasium: every id in gymnasium's registry, stepped from inside ``jax.jit``.

gymnasium is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

import envhub
from envhub.plugin import use_egl_when_headless

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# gymnasium envs whose module needs an optional dependency: (entry-point prefix, module, gymnasium extra).
_OPTIONAL = (
    ("gymnasium.envs.box2d", "Box2D", "box2d"),
    ("gymnasium.envs.mujoco", "mujoco", "mujoco"),
)
# How the conformance kit drives each env (fields of envhub.testing.Options): "*" for every env, an
# env's name for its own (envhub.check_options_for merges the two).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    "*": {"time_limit_kwarg": "max_episode_steps"},
    # Deterministic by design: the same trajectory whatever the key.
    "CliffWalking-v1": {"keys_matter": False},
    "tabular/CliffWalking-v0": {"keys_matter": False},
}
# Ids gymnasium renamed within the supported range (1.1's -> 1.2's): the old name reads the new one's options.
RENAMED = {"CliffWalking-v0": "CliffWalking-v1"}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every id in gymnasium's registry (Atari too when ale-py is installed)."""
    import gymnasium

    try:  # ale-py registers its Atari ids with gymnasium when imported
        import ale_py

        gymnasium.register_envs(ale_py)
    except ImportError:
        pass
    for name, spec in gymnasium.registry.items():
        reason = _unavailable(spec)
        factory = None if reason else functools.partial(make_gymnasium_env, name)
        register(
            name,
            factory,
            batching="native",
            unavailable=reason,
            check_options=envhub.check_options_for(CHECK_OPTIONS, RENAMED.get(name, name)),
            description="gymnasium (host, stepped through a host callback)",
            kwargs=functools.partial(accepted_kwargs, name),
        )


def make_gymnasium_env(name: str, num_envs: int | None = None, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build gymnasium ``name`` as one host vector env of ``num_envs`` (or 1, unbatched) sub-envs.

    ``vectorization_mode`` ("sync", "async", "vector_entry_point") picks gymnasium's vectorizer
    (default: the fastest that auto-resets in the same step); ``info_keys`` keeps only those
    ``info`` keys (``()`` for none); every other kwarg (``max_episode_steps``, ``render_mode``, env-specific ones) goes to gymnasium.
    """
    use_egl_when_headless()
    from envhub_gymnasium.environment import GymnasiumEnvironment

    return GymnasiumEnvironment(name, num_envs=num_envs, **kwargs)


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("gymnasium/<name>", ...)`` accepts (called by make, after gymnasium is imported)."""
    from envhub_gymnasium.kwargs import declared_kwargs

    return declared_kwargs(name)


def _unavailable(spec: Any) -> str | None:
    """Why ``spec`` cannot be made here (a missing optional dependency), or ``None``."""
    entry = spec.entry_point
    if isinstance(entry, str):
        for prefix, module, extra in _OPTIONAL:
            if entry.startswith(prefix) and importlib.util.find_spec(module) is None:
                return f'it needs {module}: pip install "gymnasium[{extra}]"'
        return None
    if callable(entry) and getattr(entry, "__name__", "").startswith("_raise"):
        try:  # gymnasium keeps some old ids only to raise an install hint
            entry()
        except Exception as exc:  # noqa: BLE001 - the hint is the reason
            return f"gymnasium says: {exc}"
    return None
