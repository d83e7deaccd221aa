"""Wrappers that pass one value of every step through a function: the observation, the reward, the action.

``TransformObservation``, ``TransformReward`` and ``TransformAction`` take any jittable function of
one environment's value (vmapped over the batch of a batched env); ``ClipReward``,
``FlattenObservation`` and the action wrappers in ``actions`` are such functions with a name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.env import Environment
from envhub.core.types import TimeStep
from envhub.errors import InvalidArgumentError
from envhub.wrappers.base import TimeStepWrapper, Wrapper

_REWARD = spaces.Box(-np.inf, np.inf, (), np.float32)


def _abstract(space: spaces.Space) -> Any:
    """One value of ``space`` as a pytree of ``jax.ShapeDtypeStruct``."""
    return jax.eval_shape(space.sample, jax.random.key(0))


def _layout(tree: Any, dtypes: bool) -> tuple[Any, list[Any]]:
    return jax.tree.structure(tree), [
        (tuple(x.shape), np.dtype(x.dtype) if dtypes else None) for x in jax.tree.leaves(tree)
    ]


def _traced(
    wrapper: str, fn: Callable[[Any], Any], given: spaces.Space, returned: spaces.Space | None, what: str
) -> Any:
    """Trace ``fn`` on one value of ``given``; its output must fit ``returned`` (when known).

    Returns the output as a pytree of ``jax.ShapeDtypeStruct``. Only observations must match the
    dtypes too: rewards are cast to float32, actions are checked and cast by the inner env's ``step``.
    """
    try:
        out = jax.eval_shape(fn, _abstract(given))
    except Exception as exc:
        raise InvalidArgumentError(
            f"{wrapper} could not trace fn={fn!r} on one {what} of {given!r} ({type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}); "
            f"pass a jittable function of one environment's {what}."
        ) from exc
    dtypes = what == "observation"
    if returned is not None and _layout(out, dtypes) != _layout(_abstract(returned), dtypes):
        shapes = jax.tree.map(lambda x: f"{x.dtype}{list(x.shape)}", out)
        raise InvalidArgumentError(
            f"{wrapper}'s fn={fn!r} returns {shapes}, which does not fit {returned!r}; "
            f"return a value of that space's structure, shapes{' and dtypes' if dtypes else ''}, or pass the space it does fit."
        )
    return out


def _per_env(env: Environment[Any, Any, Any], fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` of one environment's value, vmapped over the batch of a batched ``env``."""
    return fn if env.num_envs is None else jax.vmap(fn)


def _unbounded(abstract: Any) -> spaces.Space:
    """The widest space of each leaf's shape and dtype."""
    leaves, treedef = jax.tree.flatten(abstract)
    boxes = [spaces.Box(*_widest(x.dtype), shape=x.shape, dtype=x.dtype) for x in leaves]
    return boxes[0] if jax.tree_util.treedef_is_leaf(treedef) else spaces.Tree(jax.tree.unflatten(treedef, boxes))


def _widest(dtype: Any) -> tuple[Any, Any]:
    return (False, True) if np.dtype(dtype).kind == "b" else (-np.inf, np.inf)


class TransformObservation(TimeStepWrapper):
    """Pass every observation, ``obs`` and ``final_obs``, through ``fn`` (jittable, of one env's observation).

    ``observation_space`` is the space of ``fn``'s output for one env. When it is not given, it is
    derived with ``jax.eval_shape``: an unbounded ``Box`` of each output leaf's shape and dtype
    (pass the space to declare tighter bounds).

    Raises:
        InvalidArgumentError: ``fn`` cannot be traced, or its output does not fit ``observation_space``.
    """

    def __init__(
        self, env: Environment[Any, Any, Any], fn: Callable[[Any], Any], observation_space: spaces.Space | None = None
    ):
        super().__init__(env)
        out = _traced(type(self).__name__, fn, env.single_observation_space, observation_space, "observation")
        self.fn = fn
        self._fn = _per_env(env, fn)
        self._replace_space("observation", _unbounded(out) if observation_space is None else observation_space)

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        final_obs = None if ts.final_obs is None else self._fn(ts.final_obs)
        return ts.replace(obs=self._fn(ts.obs), final_obs=final_obs)


class TransformReward(TimeStepWrapper):
    """Pass every reward through ``fn`` (jittable, of one env's float32 reward, returning one number); in a
    multi-agent env, each agent's reward.

    Raises:
        InvalidArgumentError: ``fn`` cannot be traced on a float32 scalar, or does not return a scalar.
    """

    def __init__(self, env: Environment[Any, Any, Any], fn: Callable[[jax.Array], jax.Array]):
        super().__init__(env)
        _traced(type(self).__name__, fn, _REWARD, _REWARD, "reward")
        self.fn = fn
        self._fn = _per_env(env, fn)

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts.replace(reward=jax.tree.map(lambda r: self._fn(r).astype(jnp.float32), ts.reward))


class TransformAction(Wrapper):
    """Pass every action through ``fn`` (jittable): it maps an action of ``action_space`` to the inner env's.

    ``action_space`` is the space of the actions the agent gives, for one env; when it is not given,
    it stays the inner env's.

    Raises:
        InvalidArgumentError: ``fn`` cannot be traced on an action of ``action_space``, or returns
            another structure or shape than the inner env's actions.
    """

    def __init__(
        self, env: Environment[Any, Any, Any], fn: Callable[[Any], Any], action_space: spaces.Space | None = None
    ):
        super().__init__(env)
        given = env.single_action_space if action_space is None else action_space
        _traced(type(self).__name__, fn, given, env.single_action_space, "action")
        self.fn = fn
        self._fn = _per_env(env, fn)
        if action_space is not None:
            self._replace_space("action", action_space)

    def _step(self, key: jax.Array, state: Any, action: Any) -> tuple[Any, TimeStep[Any]]:
        return self.env.step(key, state, self._fn(action))


class DropFinalObs(TimeStepWrapper):
    """Set ``ts.final_obs`` to ``None`` everywhere, to save memory when nothing bootstraps from it."""

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        return ts.replace(final_obs=None)


class ClipReward(TransformReward):
    """Clip the reward to ``[low, high]``; ``info["unclipped_reward"]`` keeps the original."""

    def __init__(self, env: Environment[Any, Any, Any], low: float = -1.0, high: float = 1.0):
        super().__init__(env, lambda reward: jnp.clip(reward, low, high))
        self.low, self.high = low, high

    def _map(self, ts: TimeStep[Any]) -> TimeStep[Any]:
        return super()._map(ts).replace(info={**ts.info, "unclipped_reward": ts.reward})


class FlattenObservation(TransformObservation):
    """Flatten a pytree observation into one float32 vector per environment (``obs`` and ``final_obs``).

    Leaves are raveled in pytree order; integer leaves (Discrete, MultiDiscrete) keep their value,
    not a one-hot. ``observation_space`` becomes the matching ``Box``.
    """

    def __init__(self, env: Environment[Any, Any, Any]):
        single = env.single_observation_space
        leaves = single.leaves if isinstance(single, spaces.Tree) else [single]
        low = np.concatenate([np.ravel(_bounds(s)[0]) for s in leaves]).astype(np.float32)
        high = np.concatenate([np.ravel(_bounds(s)[1]) for s in leaves]).astype(np.float32)
        super().__init__(env, _flatten, spaces.Box(low, high))


def _flatten(obs: Any) -> jax.Array:
    return jnp.concatenate([jnp.ravel(x).astype(jnp.float32) for x in jax.tree.leaves(obs)])


def _bounds(space: spaces.Space) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(space, spaces.Box):
        return space.low, space.high
    if isinstance(space, spaces.MultiDiscrete):
        return space.start, space.start + space.nvec - 1
    raise InvalidArgumentError(
        f"FlattenObservation cannot flatten {space!r}; it flattens Box and (Multi)Discrete leaves."
    )


__all__ = [
    "ClipReward",
    "DropFinalObs",
    "FlattenObservation",
    "TransformAction",
    "TransformObservation",
    "TransformReward",
]
