"""Wrappers that change where episodes end or what is recorded about them."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from envhub.core.arguments import positive_int
from envhub.core.env import Environment
from envhub.core.tree import select
from envhub.core.types import TimeStep, truncated_unless_terminated
from envhub.errors import InvalidArgumentError
from envhub.native.auto_reset import restart_where
from envhub.wrappers.base import StatefulWrapper, TimeStepWrapper, Wrapper, WrapperState, batch_shape


class TimeLimit(StatefulWrapper):
    """Truncate every episode after ``max_steps`` steps.

    The counter lives in the state and restarts at every episode end, natural or not. When the
    limit cuts an episode, the inner env is reset for those environments only (``reset(where=)``),
    ``final_obs`` keeps the observation reached and ``truncated`` is set; a terminal step wins.
    The reset follows the inner env's restart rule (``envhub.native.auto_reset.restart_where``):
    behind a branch skipped on steps that cut nothing, or, where the inner env resets every env on
    every step (a cheap reset on a GPU or TPU), without one.
    """

    def __init__(self, env: Environment[Any, Any, Any], max_steps: int):
        max_steps = positive_int("max_steps", max_steps, where="for TimeLimit")
        super().__init__(env)
        self.max_steps = max_steps

    @property
    def metadata(self) -> dict[str, Any]:
        """The inner env's, with ``time_limit`` the limit in force: the shorter of this one and the inner env's."""
        inner = self.env.metadata
        limit = inner.get("time_limit")
        return {**inner, "time_limit": self.max_steps if limit is None else min(limit, self.max_steps)}

    def _episode_start(self, ts: TimeStep[Any]) -> jax.Array:
        return jnp.zeros(batch_shape(self.env), jnp.int32)

    def _step(self, key: jax.Array, state: WrapperState, action: Any) -> tuple[WrapperState, TimeStep[Any]]:
        step_key, reset_key = jax.random.split(key)
        env_state, ts = self.env.step(step_key, state.env_state, action)
        elapsed = state.wrapper_state + 1
        # The limit cuts only the episodes this step did not end (the flag rule: an end wins over the limit).
        cut = truncated_unless_terminated(ts.done, elapsed >= self.max_steps)
        env_state, obs = restart_where(self.env, reset_key, env_state, cut, ts.obs)  # the inner env's restart rule
        ts = ts.replace(obs=obs, truncated=ts.truncated | cut)
        return WrapperState(env_state, jnp.where(ts.done, 0, elapsed)), ts


class IgnoreTruncation(TimeStepWrapper):
    """Report truncation as termination (for algorithms that never bootstrap).

    With ``drop_final_obs=True``, ``final_obs`` is ``None`` everywhere, saving its memory: nothing
    bootstraps from it once truncation is gone.
    """

    def __init__(self, env: Environment[Any, Any, Any], drop_final_obs: bool = False):
        super().__init__(env)
        self.drop_final_obs = drop_final_obs

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        ts = ts.replace(terminated=ts.done, truncated=jnp.zeros_like(ts.truncated))
        return ts.replace(final_obs=None) if self.drop_final_obs else ts


class RecordEpisodeStatistics(StatefulWrapper):
    """Add episode statistics to ``info``, per environment (the returns per agent in a multi-agent env).

    ``episode_return``/``episode_length``: the episode so far, this step included (on a step where
    ``ts.done``, the finished episode's totals). ``last_episode_return``/``last_episode_length``: the
    totals of the last episode that finished, what a training curve plots (0 until one finishes).
    All four are 0 after init and after a reset of that environment.
    """

    def _episode_start(self, ts: TimeStep[Any]) -> dict[str, Any]:
        shape = batch_shape(self.env)
        returns = jax.tree.map(lambda _: jnp.zeros(shape, jnp.float32), ts.reward)  # a dict per agent if multi-agent
        lengths = jnp.zeros(shape, jnp.int32)
        return {
            "episode_return": returns,
            "episode_length": lengths,
            "last_episode_return": returns,
            "last_episode_length": lengths,
        }

    def _show_first(self, stats: dict[str, jax.Array], ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts.replace(info={**ts.info, **stats})

    def _step(self, key: jax.Array, state: WrapperState, action: Any) -> tuple[WrapperState, TimeStep[Any]]:
        env_state, ts = self.env.step(key, state.env_state, action)
        current = {
            "episode_return": jax.tree.map(jnp.add, state.wrapper_state["episode_return"], ts.reward),
            "episode_length": state.wrapper_state["episode_length"] + 1,
        }
        last = {f"last_{k}": select(ts.done, v, state.wrapper_state[f"last_{k}"]) for k, v in current.items()}
        carried = {k: select(ts.done, jax.tree.map(jnp.zeros_like, v), v) for k, v in current.items()}
        return WrapperState(env_state, {**carried, **last}), ts.replace(info={**ts.info, **current, **last})


class EpisodicLife(StatefulWrapper):
    """End an episode (``terminated``) at every life lost, without resetting the game.

    Needs ``info["lives"]`` (Atari backends give it). After a lost life the game goes on: ``obs``
    equals ``final_obs``. The real game over still resets the game, as usual.
    """

    def __init__(self, env: Environment[Any, Any, Any]):
        super().__init__(env)
        _, ts = jax.eval_shape(env.init, jax.random.key(0))
        if "lives" not in ts.info:
            raise InvalidArgumentError(
                f"EpisodicLife needs info['lives'], which {env.id!r} does not give (its info keys: {sorted(ts.info)})."
            )

    def _episode_start(self, ts: TimeStep[Any]) -> jax.Array:
        return ts.info["lives"]

    def _step(self, key: jax.Array, state: WrapperState, action: Any) -> tuple[WrapperState, TimeStep[Any]]:
        env_state, ts = self.env.step(key, state.env_state, action)
        lives = ts.info["lives"]
        lost = (lives < state.wrapper_state) & ~ts.done
        ts = ts.replace(terminated=ts.terminated | lost)
        return WrapperState(env_state, lives), ts


class ActionRepeat(Wrapper):
    """Apply each action ``repeat`` times, summing rewards; stop repeating where the episode ends.

    The TimeStep is the last one stepped, with ``final_obs``/flags of the step that ended the
    episode. Needs a JAX-native environment: a host vector env cannot pause its finished members.
    """

    def __init__(self, env: Environment[Any, Any, Any], repeat: int):
        if not env.is_jax_native:
            raise InvalidArgumentError(
                f"ActionRepeat needs a JAX-native environment; {env.id!r} lives on the host, where finished "
                f"members of the batch cannot wait: use the backend's own frame skip (e.g. frameskip= or frame_skip=)."
            )
        repeat = positive_int("repeat", repeat, where="for ActionRepeat")
        super().__init__(env)
        self.repeat = repeat

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        keys = jax.random.split(key, self.repeat)
        state, ts = self.env.step(keys[0], state, action)
        total = ts.reward

        def again(carry: tuple[Any, TimeStep[Any], jax.Array], step_key: jax.Array) -> tuple[Any, None]:
            state, ts, total = carry
            new_state, new_ts = self.env.step(step_key, state, action)
            ended = ts.done  # this environment's episode already ended: keep its results
            new_ts = new_ts.replace(reward=jax.tree.map(jnp.add, total, new_ts.reward))
            kept_ts = select(ended, ts.replace(reward=total), new_ts)
            return (select(ended, state, new_state), kept_ts, kept_ts.reward), None

        (state, ts, _), _ = jax.lax.scan(again, (state, ts, total), keys[1:])
        return state, ts


__all__ = ["ActionRepeat", "EpisodicLife", "IgnoreTruncation", "RecordEpisodeStatistics", "TimeLimit"]
