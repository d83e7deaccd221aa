"""``register_gymnasium``: every envhub id as a gymnasium id, ``envhub/<prefix>-<Name>``.

Registration lists the ids of the installed backends (their plugins' listings) and builds no
environment: ``gymnasium.make`` calls ``make_env``, ``gymnasium.make_vec`` (its default
``vector_entry_point`` mode) ``make_vector_env``, each with the envhub id in the spec's kwargs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from envhub.errors import InvalidArgumentError

NAMESPACE = "envhub"
_METADATA = {"render_modes": ["rgb_array"]}  # what an export can offer; make refuses it where the env cannot


def gymnasium_id(env_id: str) -> str:
    """``"gymnax/CartPole-v1"`` -> ``"envhub/gymnax-CartPole-v1"`` (any further ``/`` becomes ``-``)."""
    return f"{NAMESPACE}/{env_id.replace('/', '-')}"


def _check_render_mode(env: Any, render_mode: str | None) -> None:
    if render_mode is not None and render_mode not in env.render_modes:
        raise InvalidArgumentError(
            f"render_mode={render_mode!r} for {env.id!r}, which can draw {list(env.render_modes)}; leave it out."
        )


class _EnvMaker:
    """``gymnasium.make``'s entry point: ``to_gymnasium(envhub.make(envhub_id, **kwargs))``."""

    metadata = _METADATA

    def __call__(self, envhub_id: str, render_mode: str | None = None, seed: int = 0, **kwargs: Any) -> Any:
        from envhub.interop.exports import to_gymnasium
        from envhub.registry import api

        env = api.make(envhub_id, **kwargs)
        _check_render_mode(env, render_mode)
        return to_gymnasium(env, seed, render_mode)


class _VectorEnvMaker:
    """``gymnasium.make_vec``'s entry point: ``to_gymnasium_vector(envhub.make(envhub_id, num_envs=n, **kwargs))``."""

    metadata = _METADATA

    def __call__(
        self,
        envhub_id: str,
        num_envs: int = 1,
        render_mode: str | None = None,
        seed: int = 0,
        autoreset_mode: Any = "NextStep",
        **kwargs: Any,
    ) -> Any:
        from envhub.interop.exports import to_gymnasium_vector
        from envhub.registry import api

        env = api.make(envhub_id, num_envs=num_envs, **kwargs)
        _check_render_mode(env, render_mode)
        return to_gymnasium_vector(env, seed, autoreset_mode)


make_env = _EnvMaker()
make_vector_env = _VectorEnvMaker()


def register_gymnasium(prefixes: Iterable[str] | None = None) -> list[str]:
    """Register the envs of ``prefixes`` (default: every installed backend) with gymnasium; their gymnasium ids.

    Then ``gymnasium.make("envhub/gymnax-CartPole-v1")`` and ``gymnasium.make_vec(..., num_envs=8)``
    work, extra kwargs going to ``envhub.make``. Registering again replaces the entries (no warning).
    """
    import gymnasium

    from envhub.registry import api

    if prefixes is None:
        prefixes = [b.prefix for b in api.list_backends() if b.status == "ok"]
    registered = []
    for prefix in prefixes:
        for spec in api.list_envs(prefix):
            gid = gymnasium_id(spec.id)
            gymnasium.registry.pop(gid, None)
            gymnasium.register(
                gid,
                entry_point=f"{__name__}:make_env",
                vector_entry_point=f"{__name__}:make_vector_env",
                kwargs={"envhub_id": spec.id},
                disable_env_checker=True,  # to_gymnasium's envs pass check_env; its passive checker costs per step
            )
            registered.append(gid)
    return registered


__all__ = ["gymnasium_id", "make_env", "make_vector_env", "register_gymnasium"]
