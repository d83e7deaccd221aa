"""``rollout``: run a policy for N steps in one ``lax.scan``; ``Trajectory`` and its transitions.

Jitting is left to the caller: ``jax.jit(lambda k: envhub.rollout(env, policy, k, 128))``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp

from envhub.core.arguments import an_environment, positive_int
from envhub.core.exporting import register_types
from envhub.core.kwargs import STEPS_MAX
from envhub.core.types import TimeStep
from envhub.errors import InvalidArgumentError

if TYPE_CHECKING:  # annotations only: env.py calls into this module
    from envhub.core.env import Environment

Policy = Callable[[jax.Array, Any], Any]


@dataclasses.dataclass(frozen=True)
class Transition:
    """What a learner bootstraps from: ``next_obs`` is the observation the step reached.

    ``discount`` is ``gamma`` except after a terminal state (0): a truncated step keeps ``gamma``
    and bootstraps from ``next_obs``, the pre-reset observation. ``done`` marks every episode end
    (terminated or truncated), where returns and advantages must not flow across.
    """

    obs: Any
    action: Any
    reward: jax.Array
    next_obs: Any
    discount: jax.Array
    done: jax.Array


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """``num_steps`` steps of a rollout; every field leads with time.

    ``obs`` has ``num_steps + 1`` entries: ``obs[t]`` is what the policy saw at step ``t`` (the
    last one is what it would act on next). ``final_obs[t]`` is what step ``t`` reached.
    """

    obs: Any
    action: Any
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    final_obs: Any
    info: dict[str, Any]

    def transitions(self, gamma: float = 1.0) -> Transition:
        """``(obs, action, reward, next_obs, discount, done)`` per step, correct across episode ends."""
        return Transition(
            obs=jax.tree.map(lambda x: x[:-1], self.obs),
            action=self.action,
            reward=self.reward,
            next_obs=self.final_obs,
            discount=gamma * (1.0 - self.terminated.astype(jnp.float32)),
            done=jnp.logical_or(self.terminated, self.truncated),
        )


for _cls, _fields in ((Transition, Transition.__dataclass_fields__), (Trajectory, Trajectory.__dataclass_fields__)):
    jax.tree_util.register_dataclass(_cls, data_fields=list(_fields), meta_fields=[])
register_types(Transition, Trajectory)  # so a jax.export of a rollout serializes its results


def rollout(
    env: Environment[Any, Any, Any],
    policy: Policy,
    key: jax.Array,
    num_steps: int,
    start: tuple[Any, TimeStep[Any]] | None = None,
) -> tuple[Any, TimeStep[Any], Trajectory]:
    """Step ``env`` ``num_steps`` times with ``action = policy(key, obs)``.

    Starts from ``start = (state, ts)`` (to continue a previous rollout) or from ``env.init``.
    Returns the last ``(state, ts)`` and the ``Trajectory``.
    """
    (_, first), (state, last), (actions, steps) = scan_policy(
        env, policy, key, num_steps, start, keep=lambda state, action, ts: (action, ts)
    )
    trajectory = Trajectory(
        obs=jax.tree.map(lambda x, rest: jnp.concatenate([x[None], rest]), first.obs, steps.obs),
        action=actions,
        reward=steps.reward,
        terminated=steps.terminated,
        truncated=steps.truncated,
        final_obs=steps.final_obs,
        info=steps.info,
    )
    return state, last, trajectory


def scan_policy(
    env: Environment[Any, Any, Any],
    policy: Policy,
    key: jax.Array,
    num_steps: int,
    start: tuple[Any, TimeStep[Any]] | None = None,
    *,
    keep: Callable[[Any, Any, TimeStep[Any]], Any],
) -> tuple[tuple[Any, TimeStep[Any]], tuple[Any, TimeStep[Any]], Any]:
    """The one rollout loop (``rollout``, ``record``): its keys are ``schedule(key, num_steps)``'s.

    Returns the first and the last ``(state, ts)`` and ``keep(state, action, ts)`` of every step,
    stacked along time.

    Raises:
        InvalidArgumentError: ``policy`` is not callable, or ``num_steps`` is not a rollout's length.
    """
    if not callable(policy):
        raise InvalidArgumentError(
            f"policy={policy!r:.60} is not callable: a policy is a function policy(key, obs) -> action, "
            "e.g. envhub.random_policy(env) or lambda key, obs: env.action_space.sample(key)."
        )
    num_steps = rollout_length("num_steps", num_steps)
    init_key, step_keys = schedule(key, num_steps)
    first = env.init(init_key) if start is None else start

    def body(carry: tuple[Any, TimeStep[Any]], step_key: jax.Array) -> tuple[tuple[Any, TimeStep[Any]], Any]:
        state, ts = carry
        policy_key, env_key = jax.random.split(step_key)
        action = policy(policy_key, ts.obs)
        state, ts = env.step(env_key, state, action)
        return (state, ts), keep(state, action, ts)

    last, kept = jax.lax.scan(body, first, step_keys)
    return first, last, kept


def rollout_length(name: str, value: Any, where: str = "for rollout") -> int:
    """Return ``value`` if it is a rollout's length: an int from 1 to ``STEPS_MAX`` (steps are counted in int32).

    Raises:
        InvalidArgumentError: names the value, the range and how to run longer.
    """
    value = positive_int(name, value, where=where)  # a NumPy int (from a config array) comes back a Python int
    if value > STEPS_MAX:
        raise InvalidArgumentError(
            f"{name}={value} {where}: use an int from 1 to 2**31 - 1 (steps are counted in int32, and every step is "
            "kept in memory: run a long one in parts, each from the last (state, ts))."
        )
    return value


def schedule(key: jax.Array, num_steps: int) -> tuple[jax.Array, jax.Array]:
    """A rollout's init key and its ``num_steps`` step keys; step ``t`` splits its key into (policy, env)."""
    init_key, run_key = jax.random.split(key)
    return init_key, jax.random.split(run_key, num_steps)


def random_policy(env: Environment[Any, Any, Any]) -> Policy:
    """A policy that samples uniformly from ``env.action_space``.

    Raises:
        InvalidArgumentError: ``env`` is not an envhub ``Environment`` (an id, a gymnax env, ...).
    """
    an_environment("random_policy", env)
    return lambda key, obs: env.action_space.sample(key)


__all__ = [
    "Policy",
    "Trajectory",
    "Transition",
    "random_policy",
    "rollout",
    "rollout_length",
    "scan_policy",
    "schedule",
]
