"""``to_gymnasium`` and ``to_gymnasium_vector``: an envhub env as a gymnasium one (gymnasium is imported
only when one is built)."""

from __future__ import annotations

from typing import Any

from envhub.core.arguments import an_environment, single_agent_only
from envhub.core.env import Environment
from envhub.errors import InvalidArgumentError
from envhub.interop.compiled import drawn_modes


def _checked_render_mode(export: str, env: Environment[Any, Any, Any], render_mode: str | None) -> str | None:
    """``render_mode`` if ``env`` draws it (``None``: the export draws nothing), else an error naming what it draws."""
    offered = drawn_modes(env)
    if render_mode is None or render_mode in offered:
        return render_mode
    raise InvalidArgumentError(
        f"{export}(render_mode={render_mode!r}): {env.id!r} draws {offered or 'nothing'}; pass one of them or None."
    )


def to_gymnasium(env: Environment[Any, Any, Any], seed: int = 0, render_mode: str | None = None) -> Any:
    """Expose an unbatched envhub env as a ``gymnasium.Env`` (no auto-reset: call ``reset`` at the end).

    At an episode end, ``step`` returns the observation reached (envhub's ``final_obs``). Outputs
    are writable NumPy arrays; it pickles when ``env`` does (made by ``envhub.make``).
    """
    an_environment("to_gymnasium", env)
    if env.num_envs is not None:
        raise InvalidArgumentError(
            f"to_gymnasium needs an unbatched env; {env.id!r} has num_envs={env.num_envs}: use to_gymnasium_vector."
        )
    single_agent_only("to_gymnasium", env, "gymnasium.Env is single-agent")
    from envhub.interop.gym_env import EnvhubEnv

    return EnvhubEnv(env, seed, _checked_render_mode("to_gymnasium", env, render_mode))


def to_gymnasium_vector(env: Environment[Any, Any, Any], seed: int = 0, autoreset_mode: Any = "NextStep") -> Any:
    """Expose a batched envhub env as a ``gymnasium.vector.VectorEnv``.

    ``autoreset_mode``: a ``gymnasium.vector.AutoresetMode`` (or its value): ``NEXT_STEP``
    (gymnasium's default), ``SAME_STEP`` (envhub's own: ``info["final_obs"]``) or ``DISABLED``
    (``reset(options={"reset_mask": mask})``); see ``envhub.interop.gym_vector``.
    """
    an_environment("to_gymnasium_vector", env)
    if env.num_envs is None:
        raise InvalidArgumentError(f"to_gymnasium_vector needs a batched env; make {env.id!r} with num_envs=N.")
    single_agent_only("to_gymnasium_vector", env, "gymnasium's VectorEnv is single-agent")
    from envhub.interop.gym_vector import EnvhubVectorEnv

    return EnvhubVectorEnv(env, seed, autoreset_mode)


def to_pettingzoo_parallel(env: Environment[Any, Any, Any], seed: int = 0, render_mode: str | None = None) -> Any:
    """Expose an unbatched simultaneous multi-agent envhub env (e.g. ``jaxmarl/...``) as a PettingZoo
    ``ParallelEnv``: observations, actions and rewards keyed by ``env.agents`` (``envhub.interop.pettingzoo_parallel``).
    ``render_mode="rgb_array"``: ``render()`` returns the env's frame of its current state.

    Raises:
        InvalidArgumentError: ``env`` is not an envhub env, is batched, single-agent, or turn-based (one observation for the player to
            move); ``render_mode`` is not one ``env`` draws.
    """
    an_environment("to_pettingzoo_parallel", env)
    if env.num_envs is not None:
        raise InvalidArgumentError(
            f"to_pettingzoo_parallel needs an unbatched env; {env.id!r} has num_envs={env.num_envs}: make it without num_envs."
        )
    per_agent = getattr(env.single_observation_space, "spaces", None)
    if not env.agents or not isinstance(per_agent, dict) or set(per_agent) != set(env.agents):
        kind = "single-agent" if not env.agents else "turn-based (one observation, the player to move's)"
        raise InvalidArgumentError(
            f"to_pettingzoo_parallel needs a simultaneous multi-agent env (observations keyed by env.agents); "
            f"{env.id!r} is {kind} (docs/multi-agent.md)."
        )
    from envhub.interop.pettingzoo_parallel import EnvhubParallelEnv

    return EnvhubParallelEnv(env, seed, _checked_render_mode("to_pettingzoo_parallel", env, render_mode))


def to_pettingzoo_aec(env: Environment[Any, Any, Any], seed: int = 0, render_mode: str | None = None) -> Any:
    """Expose an unbatched turn-based envhub game (e.g. ``pgx/...``: one observation with ``current_player`` and
    ``legal_action_mask``) as a PettingZoo ``AECEnv`` (``envhub.interop.pettingzoo_aec``).
    ``render_mode="rgb_array"``: ``render()`` returns the env's frame of its current state.

    Raises:
        InvalidArgumentError: ``env`` is not an envhub env, is batched, single-agent, or not turn-based; ``render_mode`` is not one
            ``env`` draws.
    """
    an_environment("to_pettingzoo_aec", env)
    if env.num_envs is not None:
        raise InvalidArgumentError(
            f"to_pettingzoo_aec needs an unbatched env; {env.id!r} has num_envs={env.num_envs}: make it without num_envs."
        )
    fields = getattr(env.single_observation_space, "spaces", None)
    if not env.agents or not isinstance(fields, dict) or not {"current_player", "legal_action_mask"} <= set(fields):
        kind = "single-agent" if not env.agents else "not turn-based (use to_pettingzoo_parallel)"
        raise InvalidArgumentError(
            f"to_pettingzoo_aec needs a turn-based multi-agent env (obs with current_player and legal_action_mask); "
            f"{env.id!r} is {kind} (docs/multi-agent.md)."
        )
    from envhub.interop.pettingzoo_aec import EnvhubAECEnv

    return EnvhubAECEnv(env, seed, _checked_render_mode("to_pettingzoo_aec", env, render_mode))


__all__ = ["to_gymnasium", "to_gymnasium_vector", "to_pettingzoo_aec", "to_pettingzoo_parallel"]
