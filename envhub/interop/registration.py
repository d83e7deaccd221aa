"""``register_gymnasium``: every single-agent envhub id as a gymnasium id, ``envhub/<prefix>-<Name>``.

Registration lists the ids of the installed backends (their plugins' listings) and builds no
environment: ``gymnasium.make`` calls ``make_env``, ``gymnasium.make_vec`` (its default
``vector_entry_point`` mode) ``make_vector_env``, each with the envhub id in the spec's kwargs. The env such a
maker builds belongs to the export it returns: the export's ``close()`` closes it (``envhub.interop.contract``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from typing import Any

from envhub.interop.contract import owning
from envhub.interop.flags import FLAGS

NAMESPACE = "envhub"
_METADATA = {"render_modes": ["rgb_array"]}  # what an export can offer; make refuses it where the env cannot


#: Backends whose envs are multi-agent (``env.agents``), not gymnasium envs: ``register_gymnasium`` skips their ids,
#: but for the names starting with one of the listed prefixes (pgx's one-player games: 2048 and MinAtar). A spec says
#: nothing of agents and registration builds no env, so this table is the rule; a third party's multi-agent id that
#: gets registered is refused by ``gymnasium.make`` (``to_gymnasium``: single-agent only).
MULTI_AGENT_BACKENDS: dict[str, tuple[str, ...]] = {"jaxmarl": (), "pgx": ("2048", "minatar-")}
_NOT_IN_A_NAME = re.compile(r"[^\w:.-]")  # what gymnasium's ENV_ID_RE does not accept in a name


def gymnasium_id(env_id: str) -> str:
    """``"gymnax/CartPole-v1"`` -> ``"envhub/gymnax-CartPole-v1"``: each ``/`` becomes ``-``, and every character
    gymnasium does not accept in a name (all but letters, digits, ``_``, ``-``, ``.`` and ``:``) becomes ``_``
    (``"jaxmarl/humanoid_9|8"`` -> ``"envhub/jaxmarl-humanoid_9_8"``)."""
    return f"{NAMESPACE}/{_NOT_IN_A_NAME.sub('_', env_id.replace('/', '-'))}"


def single_agent(prefix: str, name: str) -> bool:
    """Whether ``prefix/name`` is a single-agent id by ``MULTI_AGENT_BACKENDS``' rule (nothing is built)."""
    single = MULTI_AGENT_BACKENDS.get(prefix.lower())
    return single is None or name.startswith(single)


def _registrable(spec: Any) -> bool:
    """Available, single-agent, and not one of ours seen back through the gymnasium backend (``gymnasium/envhub/...``,
    which registering again would nest once more)."""
    ours = spec.prefix == "gymnasium" and spec.name.startswith(f"{NAMESPACE}/")
    return spec.available and not ours and single_agent(spec.prefix, spec.name)


def _exported(env: Any, export: Any, render_mode: str | None, *args: Any) -> Any:
    """``export(env, *args)``, owning ``env``; ``env`` closed where ``render_mode`` or the export refuses it."""
    try:
        FLAGS["render_mode"]("gymnasium.make", env, render_mode)
        return owning(export(env, *args))
    except BaseException:
        env.close()
        raise


class _EnvMaker:
    """``gymnasium.make``'s entry point: ``to_gymnasium(envhub.make(envhub_id, **kwargs))``."""

    metadata = _METADATA

    def __call__(self, envhub_id: str, render_mode: str | None = None, seed: int = 0, **kwargs: Any) -> Any:
        from envhub.interop.gym_env import to_gymnasium
        from envhub.registry import api

        return _exported(api.make(envhub_id, **kwargs), to_gymnasium, render_mode, seed, render_mode)


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
        from envhub.interop.gym_vector import to_gymnasium_vector
        from envhub.registry import api

        env = api.make(envhub_id, num_envs=num_envs, **kwargs)
        return _exported(env, to_gymnasium_vector, render_mode, seed, autoreset_mode)


make_env = _EnvMaker()
make_vector_env = _VectorEnvMaker()


def register_gymnasium(prefixes: Iterable[str] | None = None) -> list[str]:
    """Register the envs of ``prefixes`` (default: every installed backend) with gymnasium; their gymnasium ids.

    Then ``gymnasium.make("envhub/gymnax-CartPole-v1")`` and ``gymnasium.make_vec(..., num_envs=8)``
    work, extra kwargs going to ``envhub.make``. Registering again replaces the entries (no warning).
    Only available single-agent ids are registered (``MULTI_AGENT_BACKENDS``: jaxmarl's and pgx's multi-player
    games are skipped; so are the gymnasium backend's views of these registrations, ``gymnasium/envhub/...``), each
    under ``gymnasium_id`` (a gymnasium-valid name); an id gymnasium still refuses, or
    whose name an earlier id took, is skipped with a warning, and the others are registered.
    """
    import gymnasium

    from envhub.registry import api

    if prefixes is None:
        prefixes = [b.prefix for b in api.list_backends() if b.status == "ok"]
    registered: dict[str, str] = {}  # gymnasium id -> envhub id
    for prefix in prefixes:
        for spec in api.list_envs(prefix):
            if not _registrable(spec):
                continue
            gid = gymnasium_id(spec.id)
            if gid in registered:
                warnings.warn(f"register_gymnasium: {spec.id!r} skipped: {gid!r} is {registered[gid]!r}", stacklevel=2)
                continue
            gymnasium.registry.pop(gid, None)
            try:
                gymnasium.register(
                    gid,
                    entry_point=f"{__name__}:make_env",
                    vector_entry_point=f"{__name__}:make_vector_env",
                    kwargs={"envhub_id": spec.id},
                    disable_env_checker=True,  # to_gymnasium's envs pass check_env; its passive checker costs per step
                )
            except gymnasium.error.Error as exc:  # e.g. a versioned and an unversioned id of one name
                gymnasium.registry.pop(gid, None)
                warnings.warn(
                    f"register_gymnasium: {spec.id!r} skipped: gymnasium refused {gid!r}: {exc}", stacklevel=2
                )
                continue
            registered[gid] = spec.id
    return list(registered)


__all__ = ["MULTI_AGENT_BACKENDS", "gymnasium_id", "make_env", "make_vector_env", "register_gymnasium", "single_agent"]
