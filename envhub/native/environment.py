"""``JaxEnvironment``: the base of JAX-native backends, the counterpart of ``HostEnvironment``.

A backend describes one environment with two pure functions, ``_reset_one(key) -> (state, obs)`` and
``_step_one(key, state, action) -> JaxStep`` (no auto-reset, no batch), and its two single spaces.
The base does the rest, once for every backend: the batch (``num_envs``: ``vmap`` inside, one key
in), the episode step counter and time limit (``max_episode_steps``, reported as truncation), the
flag rule (``TimeStep.transition``), same-step auto-reset with ``final_obs`` (``reset_strategy``, one of
``envhub.native.auto_reset``'s schemes), weak types cast away so ``jit(step)`` traces
once, the backend's two functions traced once per env and input shape for all its programs
(``_traced_once``), and zero ``info`` at init and reset with the structure of a step's.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

import jax
import jax.numpy as jnp

from envhub import spaces
from envhub.core.env import Environment
from envhub.core.kwargs import TIME_LIMIT_KWARG
from envhub.core.params import as_arrays, per_env
from envhub.core.spaces_of_one import SpacesOfOne
from envhub.core.tree import select
from envhub.core.types import JaxStep, TimeStep
from envhub.errors import InvalidArgumentError
from envhub.native import resets
from envhub.native.auto_reset import ResetStrategy, strong, uses_spares
from envhub.native.kwargs import RESET_MODES, check_arguments, jax_kwargs, take_time_limit
from envhub.native.state import JaxState, StateLayout, checked_state

S = TypeVar("S")
Obs = TypeVar("Obs")
Action = TypeVar("Action")


class JaxEnvironment(SpacesOfOne, Environment[JaxState[S], Obs, Action], Generic[S, Obs, Action]):
    """Base of JAX-native backends: implement ``_reset_one`` and ``_step_one``, and give the spaces.

    A backend with parameters as data also overrides ``default_params`` (and may give ``params_bounds``);
    its ``_reset_one``, ``_step_one`` and ``_restart_one`` then take one env's params as a last argument.

    Args:
        observation_space: The observation space of one environment (or define the
            ``single_observation_space`` property instead).
        action_space: The action space of one environment (or ``single_action_space``).
        num_envs: ``None`` for one environment, ``N`` for a batch of ``N`` (vmapped inside).
        max_episode_steps: Steps after which an episode is truncated; ``None`` for no limit of the base's
            own (the backend may still report its own truncation).
        reset_mode: ``"real"``: every episode starts from its own reset and key. ``"cached"``: every
            episode restarts from the environment's first state (cheaper; episodes repeat).
        reset_spares: batched real resets only: ``True`` keeps one spare initial state per environment
            (``envhub.native.auto_reset``'s ``"spares"``), ``False`` resets the finished ones on the step they
            end; ``None``: spares, except for a ``cheap_reset`` backend on a GPU or TPU (``reset_strategy``).
        reset_chunk: batched resets vmap at most this many environments at a time, the rest in sequence
            (``envhub.native.resets.vmap_in_chunks``): for backends whose batched reset grows faster than the batch.
    """

    def __init__(
        self,
        *,
        observation_space: spaces.Space | None = None,
        action_space: spaces.Space | None = None,
        num_envs: int | None = None,
        max_episode_steps: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        reset_chunk: int | None = None,
    ):
        num_envs, max_episode_steps, reset_chunk = check_arguments(num_envs, max_episode_steps, reset_mode, reset_chunk)
        self._declare_spaces(observation_space, action_space)
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        self.reset_mode, self.reset_chunk = reset_mode, reset_chunk
        plain = type(self)._restart_one is JaxEnvironment._restart_one
        self.reset_spares = uses_spares(num_envs is not None, reset_mode, plain, reset_spares, self.cheap_reset)
        self._step_out_shapes: Any = None

    cheap_reset: bool = False
    """A backend sets ``True`` where a reset costs about a step (gymnax's): on a GPU or TPU its envs then reset on
    the step, every env on every step, with no spares (``envhub.native.auto_reset``)."""

    copy_of: Environment[Any, Any, Any] | None = None  # auto_reset.leaving_restarts' copies: the env copied

    @property
    def closed(self) -> bool:
        return self._closed or (self.copy_of is not None and self.copy_of.closed)

    @property
    def reset_strategy(self) -> ResetStrategy:
        """How this env restarts finished episodes (``envhub.native.auto_reset``), from its settings; kept until an
        attribute is set."""
        if "_reset_strategy" in self.__dict__:
            return self.__dict__["_reset_strategy"]
        if self.copy_of is not None:
            strategy = ResetStrategy("caller", self.num_envs)
        else:
            default, reset_one = self.default_params, cast("Callable[..., Any]", self._reset_one)  # (key, params)
            own = self.reset_spares and default is not None  # spares follow each env's params if its reset reads them
            own = own and resets.reads_params(reset_one, jax.random.key(0), as_arrays(default))
            strategy = ResetStrategy.choose(self.num_envs, self.reset_mode, self.reset_spares, self.reset_chunk, own)
        self.__dict__["_reset_strategy"] = strategy
        return strategy

    # --- what backends implement -------------------------------------------------------------

    @abc.abstractmethod
    def _reset_one(self, key: jax.Array) -> tuple[S, Obs]:
        """One environment's initial state and observation."""

    @abc.abstractmethod
    def _step_one(self, key: jax.Array, state: S, action: Action) -> JaxStep:
        """One environment's step, without auto-reset and without the base's time limit."""

    def _restart_one(self, key: jax.Array, state: S, *params: Any) -> tuple[S, Obs]:
        """The auto-reset of one environment whose episode ended in ``state``; default ``_reset_one(key)``
        (``_reset_one(key, params)`` for a backend with params).

        Override it when something outlives an episode (e.g. cumulative counters); spare initial
        states cannot depend on the old state, so an override turns ``reset_spares`` off.
        """
        return self._reset_one(key, *params)

    # --- metadata -----------------------------------------------------------------------------

    @property
    def metadata(self) -> dict[str, Any]:
        names = ("time_limit", "reset_mode", "reset_spares", "reset_chunk")
        return dict(zip(names, (self.max_episode_steps, self.reset_mode, self.reset_spares, self.reset_chunk)))

    # --- the envhub API: called eagerly, one compiled program per method; traced, inlined -------

    def _init(self, key: jax.Array, params: Any = None) -> tuple[JaxState[S], TimeStep[Obs]]:
        return self._compiled_if_eager(self._init_traced, key, self._state_params(params))

    def _reset(self, key: jax.Array, state: JaxState[S], params: Any = None) -> tuple[JaxState[S], TimeStep[Obs]]:
        state = self._checked_state(state, "reset")
        return self._compiled_if_eager(self._reset_traced, key, state, self._given(params))

    def _reset_where(
        self, key: jax.Array, state: JaxState[S], where: jax.Array, params: Any = None
    ) -> tuple[JaxState[S], TimeStep[Obs]]:
        state = self._checked_state(state, "reset")
        return self._compiled_if_eager(self._reset_where_traced, key, state, where, self._given(params))

    def _set_params(self, state: JaxState[S], params: Any, where: jax.Array | None) -> JaxState[S]:
        state = self._checked_state(state, "set_params")
        if self.reset_mode == "cached":
            raise InvalidArgumentError(
                f"set_params on {self.id!r}: reset_mode='cached' restarts every episode from the state cached at "
                f"init, so new params could not reach the next episodes; pass them to env.reset(key, state, params=...)."
            )
        new = state.with_next_params(self._state_params(params), where)
        return dataclasses.replace(new, spares=self.reset_strategy.stale(state.spares, where))

    def _step(self, key: jax.Array, state: JaxState[S], action: Action) -> tuple[JaxState[S], TimeStep[Obs]]:
        return self._compiled_if_eager(self._step_traced, key, self._checked_state(state, "step"), action)

    def _checked_state(self, state: Any, method: str) -> JaxState[S]:
        """``state`` if it is one of this env's states (``envhub.native.state.checked_state``), checked before any work."""
        want = self.__dict__.get("_state_shapes")
        if want is None:  # no init traced on this env object yet: trace one (it records them)
            jax.eval_shape(self._init_traced, jax.random.key(0), self._state_params(None))
            want = self.__dict__["_state_shapes"]
        return checked_state(self.id, method, state, want)

    def _compiled_if_eager(self, method: Any, *args: Any) -> Any:
        """Run ``method`` inline under a trace; eagerly, through this env's own ``jax.jit`` of it
        (op by op, a physics step takes seconds and every ``lax.cond`` would compile anew)."""
        if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(args)):
            return method(*args)
        return self._own_jit("_compiled", method.__name__)(*args)

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name != "_step_out_shapes":  # the backend's functions read its attributes: compile and trace them anew
            for cache in ("_compiled", "_inner", "_reset_strategy", "_state_shapes"):
                self.__dict__.pop(cache, None)

    def _traced_once(self, name: str) -> Any:
        """This env's ``jax.jit`` of the backend method ``name``, called inside the programs above: every
        program built from this env (init, step, reset, rollouts, exports) reuses one trace of the
        backend's physics per input shape instead of tracing it again (XLA inlines the call)."""
        return self._own_jit("_inner", name)

    def _own_jit(self, cache: str, name: str) -> Any:
        """This env's ``jax.jit`` of its method ``name``, kept in ``self.<cache>`` until an attribute is set."""
        jits = self.__dict__.setdefault(cache, {})
        if name not in jits:
            jits[name] = jax.jit(getattr(self, name))
        return jits[name]

    def _init_traced(self, key: jax.Array, params: Any) -> tuple[JaxState[S], TimeStep[Obs]]:
        env, obs = self._map(self._fresh, key, params, chunk=self.reset_chunk)
        steps = jnp.zeros(self._batch, jnp.int32)
        first = (env, obs) if self.reset_mode == "cached" else None
        state = JaxState(env, steps, first, self.reset_strategy.first_spares((env, obs))).running_on(params)
        if "_state_shapes" not in self.__dict__:  # what _checked_state compares states with (shapes as traced here)
            self.__dict__["_state_shapes"] = StateLayout.of(state)
        return state, self._first_timestep(obs, key, env, params)

    def _reset_traced(self, key: jax.Array, state: JaxState[S], params: Any) -> tuple[JaxState[S], TimeStep[Obs]]:
        if self.reset_mode == "cached" and params is None:
            env, obs = state.first
            return dataclasses.replace(state, env=env, steps=jnp.zeros_like(state.steps)), self._first_timestep(
                obs, key, env, state.params
            )
        new, ts = self._init_traced(key, state.next_params if params is None else params)
        spares = state.spares if params is None else self.reset_strategy.stale(state.spares, None)
        return dataclasses.replace(new, spares=spares), ts  # unless params changed, the spares are still unused

    def _reset_where_traced(
        self, key: jax.Array, state: JaxState[S], where: jax.Array, params: Any
    ) -> tuple[JaxState[S], TimeStep[Obs]]:
        new, ts = self._reset_traced(key, state, params)
        # The rows reset run on their next params (given ones, or the state's own: on_next).
        keep = ("first", "next_params", "prior_params", "on_next") if params is not None else ("on_next",)
        return dataclasses.replace(
            state,
            env=select(where, new.env, state.env),
            steps=jnp.where(where, 0, state.steps),
            spares=state.spares if params is None else self.reset_strategy.stale(state.spares, where),
            **{name: select(where, getattr(new, name), getattr(state, name)) for name in keep},
        ), ts

    def _step_traced(self, key: jax.Array, state: JaxState[S], action: Action) -> tuple[JaxState[S], TimeStep[Obs]]:
        step_key, reset_key = jax.random.split(key)  # as gymnax: gymnax envs match their own step
        params = state.params  # a select XLA fuses into the step: params themselves are never written
        out = strong(self._map(self._one("_step_one"), step_key, state.env, action, params))
        steps = state.steps + 1
        truncated = jnp.asarray(out.truncated, jnp.bool_)
        if self.max_episode_steps is not None:
            truncated = truncated | (steps >= self.max_episode_steps)
        ts = TimeStep.transition(out.obs, out.reward, out.terminated, truncated, out.obs, out.info)
        reached, restarts = (out.state, out.obs), self.reset_strategy
        (env, obs), spares = restarts.after_step(reset_key, ts.done, reached, state, self._fresh, self._restart)
        on_next = state.on_next if params is None else state.on_next | ts.done  # new episodes start on next_params
        new = dataclasses.replace(state, env=env, steps=jnp.where(ts.done, 0, steps), spares=spares, on_next=on_next)
        return new, ts.replace(obs=obs)

    # --- the machinery -----------------------------------------------------------------------

    @property
    def _batch(self) -> tuple[int, ...]:
        return () if self.num_envs is None else (self.num_envs,)

    def _map(self, fn: Any, key: jax.Array, *args: Any, chunk: int | None = None) -> Any:
        """``fn(key, *args)`` for one environment, or vmapped over ``num_envs`` with ``split(key, num_envs)``."""
        if self.num_envs is None:
            return fn(key, *args)
        return resets.vmap_in_chunks(fn, chunk)(jax.random.split(key, self.num_envs), *args)

    def _fresh(self, key: jax.Array, params: Any) -> tuple[S, Obs]:
        """One env's initial ``(state, obs)``, strongly typed."""
        return strong(self._one("_reset_one")(key, params))

    def _restart(self, key: jax.Array, reached: tuple[S, Obs], params: Any) -> tuple[S, Obs]:
        """One env's auto-reset after its episode ended in ``reached``, strongly typed."""
        return strong(self._one("_restart_one")(key, reached[0], params))

    def _one(self, name: str) -> Any:
        """The backend's method ``name`` (traced once) taking one env's params last, given only to backends with params."""
        method = self._traced_once(name)
        if self.default_params is None:  # a backend without params (plugin API 1): its methods take none
            return lambda *args: method(*args[:-1])
        return method

    def _state_params(self, params: Any) -> Any:
        """Checked ``params`` (``None``: the defaults) as a state keeps them: arrays, leading with ``num_envs``."""
        default = self.default_params
        if default is None:
            return None
        return per_env(default, as_arrays(default) if params is None else params, self.num_envs)

    def _given(self, params: Any) -> Any:
        return None if params is None else self._state_params(params)

    def _first_timestep(self, obs: Obs, key: jax.Array, env: S, params: Any) -> TimeStep[Obs]:
        info, reward = self._step_shapes(key, env, params)
        zero_info = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), info)
        return TimeStep.first(obs, zero_info, self._batch, reward=reward if self.agents else None)

    def _step_shapes(self, key: jax.Array, env: S, params: Any) -> tuple[Any, Any]:
        """The shapes of a step's ``info`` and ``reward``, so init, reset and step share one pytree structure."""
        if self._step_out_shapes is None:

            def info_and_reward(k: jax.Array, e: S, a: Action, p: Any) -> tuple[Any, Any]:
                out = self._map(self._one("_step_one"), k, e, a, p)
                return strong((out.info, out.reward))

            action = self.action_space.sample(jax.random.key(0))
            self._step_out_shapes = jax.eval_shape(info_and_reward, key, env, action, params)
        return self._step_out_shapes


__all__ = ["RESET_MODES", "TIME_LIMIT_KWARG", "JaxEnvironment", "JaxState", "JaxStep", "jax_kwargs", "take_time_limit"]
