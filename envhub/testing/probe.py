"""One environment's programs, each traced and compiled once and shared by every check.

Compilation dominates the kit's cost, so checks do not build programs of their own: they ask the
``Probe`` for what they inspect, and the probe compiles each program the first time a check needs
it (``run``: a scan rollout of the default env, with space samples and a final reset;
``run_limited``: one of the env made with the short time limit). Structure, shapes and dtypes are
read from one trace of init, a step and reset (``traced_first_steps``, ``jax.eval_shape``), which
compiles nothing.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from envhub.core.env import Environment
from envhub.core.params import as_arrays, per_env
from envhub.core.types import TimeStep

MakeEnv = Callable[..., Environment[Any, Any, Any]]
Rollout = tuple[TimeStep[Any], TimeStep[Any]]
#: The keys ``Probe.vmapped_first_steps`` maps over: one shape, so the ``vmap`` and ``pure`` checks share its program.
VMAP_KEYS = 3


@dataclasses.dataclass(frozen=True)
class Options:
    """How the kit exercises one environment.

    A plugin registers them per environment in one shape: a module-level table
    ``CHECK_OPTIONS: dict[str, dict[str, Any]]`` of these fields, keyed by env name, with ``"*"``
    for all its envs (``{"*": {"time_limit_kwarg": "max_steps"}, "Slow-v0": {"num_steps": 20}}``),
    passed as ``register(name, ..., check_options=envhub.check_options_for(CHECK_OPTIONS, name))``.
    ``options_for(spec)`` (and so ``ConformanceTests`` and ``envhub check``) reads them back.

    Attributes:
        num_steps: Steps of the auto-reset check's rollout when the env has no time-limit kwarg.
        time_limit_kwarg: The ``make`` kwarg that sets the time limit (gymnax:
            ``max_steps_in_episode``, gymnasium: ``max_episode_steps``); ``None`` if there is none.
        time_limit: The short limit the truncation checks set through ``time_limit_kwarg``.
        keys_matter: ``False`` for environments whose trajectory does not depend on the key.
        reset_obs_can_repeat: ``True`` when a new episode's first obs can equal the previous
            episode's last (e.g. a bandit whose observation never changes).
        obs_depend_on_time_limit: ``True`` when observations encode the time limit (e.g. a
            normalised clock), so the truncation check cannot compare runs with two limits.
        atol: Tolerance when comparing floats between jitted and eager runs.
        export: ``False`` skips the ``export`` check (it compiles the step once more) for this env;
            it then reports SKIPPED, saying so.
        jit_refusal: How a host env refuses an invalid action inside ``jit``: ``"raise"``, from its host
            callback; ``"checked"``, under ``envhub.checked`` only (a host env whose compiled step has no
            host callback, e.g. ALE's XLA calls: plain ``jit`` cannot raise there); the ``pure`` check then
            applies to it too.
        params: ``False`` skips the ``params`` check (it compiles init, step and reset once more) for this
            env; it then reports SKIPPED, saying so.
        params_variant: Fields (or keys) of ``default_params`` and the values the ``params`` check sets them
            to instead of scaling every float leaf by 1.25 (``{"max_steps_in_episode": 10}``): for params whose
            effect the kit's short rollout would not show.
    """

    num_steps: int = 200
    time_limit_kwarg: str | None = None
    time_limit: int = 7
    keys_matter: bool = True
    reset_obs_can_repeat: bool = False
    obs_depend_on_time_limit: bool = False
    atol: float = 1e-5
    export: bool = True
    jit_refusal: str = "raise"
    params: bool = True
    params_variant: dict[str, Any] | None = None


def rollout_keys(
    key: jax.Array, action_key: jax.Array | None, num_steps: int
) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
    """The init key and per-step (env, action) keys; step t's keys do not depend on ``num_steps``,
    so a shorter rollout with the same keys is a prefix of a longer one."""
    init_key, run_key, own_action_key = jax.random.split(key, 3)
    action_key = own_action_key if action_key is None else action_key
    steps = jnp.arange(num_steps)
    fold = jax.vmap(jax.random.fold_in, in_axes=(None, 0))
    return init_key, (fold(run_key, steps), fold(action_key, steps))


def random_step(env: Environment[Any, Any, Any], state: Any, keys: tuple[jax.Array, jax.Array]) -> tuple[Any, Any]:
    """One step with an action sampled from the action space; ``keys`` are (env key, action key)."""
    env_key, action_key = keys
    return env.step(env_key, state, env.action_space.sample(action_key))


def rollout_fn(env: Environment[Any, Any, Any], num_steps: int, *, jit: bool = True) -> Callable[..., Rollout]:
    """Return ``run(key, action_key=None)``: init, then ``num_steps`` steps with random actions.

    It returns the first TimeStep and the stacked step TimeSteps. Actions come from ``action_key``
    when given (so only the environment's keys vary with ``key``), else from ``key``. The jitted
    version compiles once per env and can be called with many keys; the eager one is a Python loop.
    """

    def scanned(key: jax.Array, action_key: jax.Array | None = None) -> Rollout:
        init_key, step_keys = rollout_keys(key, action_key, num_steps)
        state, first = env.init(init_key)
        _, steps = jax.lax.scan(functools.partial(random_step, env), state, step_keys)
        return first, steps

    def looped(key: jax.Array, action_key: jax.Array | None = None) -> Rollout:
        init_key, (env_keys, action_keys) = rollout_keys(key, action_key, num_steps)
        state, first = env.init(init_key)
        outs = []
        for keys in zip(env_keys, action_keys):
            state, ts = random_step(env, state, keys)
            outs.append(ts)
        return first, jax.tree.map(lambda *xs: jnp.stack(xs), *outs)

    return jax.jit(scanned) if jit else looped


def rollout(env: Environment[Any, Any, Any], key: jax.Array, num_steps: int, *, jit: bool = True) -> Rollout:
    """Init then step ``num_steps`` times with random actions; return the first and stacked TimeSteps."""
    return rollout_fn(env, num_steps, jit=jit)(key)


def in_space(env: Environment[Any, Any, Any], obs: Any) -> jax.Array:
    """Whether ``obs`` (batched like ``env``) lies in the env's observation space, for every env."""
    if env.num_envs is None:
        return jnp.asarray(env.observation_space.contains(obs))
    return jnp.all(jax.vmap(env.single_observation_space.contains)(obs))


def space_names(env: Environment[Any, Any, Any]) -> list[str]:
    """The space attributes an env must offer: the single-env ones too when it is batched."""
    names = ["action_space", "observation_space"]
    return names if env.num_envs is None else [*names, "single_action_space", "single_observation_space"]


def first_steps(env: Environment[Any, Any, Any], key: jax.Array) -> dict[str, Any]:
    """init, one random step, then reset, all from ``key``: the (state, TimeStep) pair of each."""
    after_init = env.init(key)
    after_step = env.step(key, after_init[0], env.action_space.sample(key))
    return {"init": after_init, "step": after_step, "reset": env.reset(key, after_step[0])}


def checked_rollout_fn(
    env: Environment[Any, Any, Any], num_steps: int, *, extras: bool = False
) -> Callable[[jax.Array, jax.Array], dict[str, Any]]:
    """Jitted ``run(key, action_key)``: a rollout as a dict of ``first`` (init's TimeStep), ``steps``
    (stacked) and ``inside`` (per step: whether obs and final_obs lie in the observation space).

    With ``extras`` it also resets at the end and samples every space, adding ``init_inside`` and
    ``reset_inside`` (whether those obs lie in the space) and ``samples`` ({name: (sample, contained)}),
    so one program serves every check that inspects values.
    """

    def body(state: Any, keys: tuple[jax.Array, jax.Array]) -> tuple[Any, Any]:
        state, ts = random_step(env, state, keys)
        return state, (ts, {"obs": in_space(env, ts.obs), "final_obs": in_space(env, ts.final_obs)})

    def run(key: jax.Array, action_key: jax.Array, params: Any = None) -> dict[str, Any]:
        init_key, step_keys = rollout_keys(key, action_key, num_steps)
        state, first = env.init(init_key, params=params)
        state, (steps, inside) = jax.lax.scan(body, state, step_keys)
        out = {"first": first, "steps": steps, "inside": inside}
        if extras:
            _, after_reset = env.reset(key, state)
            out["init_inside"] = in_space(env, first.obs)
            out["reset_inside"] = in_space(env, after_reset.obs)
            out["samples"] = {}
            for name in space_names(env):
                space = getattr(env, name)
                sample = space.sample(jax.random.key(1))
                out["samples"][name] = (sample, space.contains(sample))
        return out

    return jax.jit(run)


def prefix(tree: Any, length: int) -> Any:
    """The first ``length`` steps of a stacked rollout."""
    return jax.tree.map(lambda x: x[:length], tree)


class WithParams:
    """A jitted ``run(key, action_key, params)`` called with the env's default params (leading with
    ``num_envs`` when batched) unless others are given: one program for every params value."""

    def __init__(self, jitted: Any, env: Environment[Any, Any, Any]):
        self.jitted, default = jitted, env.default_params
        self.default = None if default is None else per_env(default, as_arrays(default), env.num_envs)

    def __call__(self, key: jax.Array, action_key: jax.Array, params: Any = None) -> Any:
        return self.jitted(key, action_key, self.default if params is None else params)

    def lower(self, key: jax.Array, action_key: jax.Array) -> Any:
        return self.jitted.lower(key, action_key, self.default)

    def cache_size(self) -> int:
        """How many programs jit compiled for it (one, whatever the params values)."""
        return int(self.jitted._cache_size())


class Probe:
    """The programs the checks inspect for one environment, each compiled at most once.

    ``make_env(**kwargs)`` returns a fresh environment per call; ``close()`` closes every
    environment the probe made. Programs are built on first use, so a check that needs only one
    never pays for the others.
    """

    def __init__(self, make_env: MakeEnv, options: Options):
        self.make_env, self.options = make_env, options
        self._made: list[Environment[Any, Any, Any]] = []

    def fresh(self, **kwargs: Any) -> Environment[Any, Any, Any]:
        """A new environment from ``make_env`` that ``close()`` will close."""
        env = self.make_env(**kwargs)
        self._made.append(env)
        return env

    @functools.cached_property
    def env(self) -> Environment[Any, Any, Any]:
        """The environment with default kwargs, shared by the programs below."""
        return self.fresh()

    @functools.cached_property
    def traced_first_steps(self) -> dict[str, Any]:
        """The avals (``jax.ShapeDtypeStruct``s) of ``first_steps(env, key)``: traced, never compiled."""
        return jax.eval_shape(functools.partial(first_steps, self.env), jax.random.key(0))

    @functools.cached_property
    def vmapped_first_steps(self) -> Callable[[jax.Array], dict[str, Any]]:
        """Jitted ``jax.vmap(first_steps)`` of the unbatched env, called on ``VMAP_KEYS``: the ``vmap``
        check runs it and the ``pure`` check lowers it (lowering a program already run is free)."""
        return jax.jit(jax.vmap(functools.partial(first_steps, self.env)))

    @functools.cached_property
    def main_steps(self) -> int:
        """Length of the default env's rollout: enough for every check that slices a prefix."""
        options = self.options
        # The auto-reset check needs num_steps when there is no limit kwarg; otherwise 64 steps
        # (fewer if the author asked for fewer, as for slow envs) serve determinism, jit (12)
        # and the truncation check's long run (time_limit).
        wanted = options.num_steps if options.time_limit_kwarg is None else min(64, options.num_steps)
        return max(12, options.time_limit, wanted)

    @functools.cached_property
    def run(self) -> WithParams:
        """Jitted ``run(key, action_key, params=defaults)`` of ``main_steps`` steps of ``env`` (see
        ``checked_rollout_fn``): an env's params are an input of the program, so the ``params`` check reuses it."""
        return WithParams(checked_rollout_fn(self.env, self.main_steps, extras=True), self.env)

    @functools.cached_property
    def limited_steps(self) -> int:
        """Length of the short-limit rollout: three episodes cut by the limit, and two steps more."""
        return 3 * self.options.time_limit + 2

    @functools.cached_property
    def run_limited(self) -> Callable[[jax.Array, jax.Array], Any]:
        """Jitted ``run(key, action_key)`` of the env made with ``time_limit_kwarg=time_limit``."""
        assert self.options.time_limit_kwarg is not None
        env = self.fresh(**{self.options.time_limit_kwarg: self.options.time_limit})
        return checked_rollout_fn(env, self.limited_steps)

    @functools.cached_property
    def at_zero(self) -> dict[str, Any]:
        """``run(key(0), key(1))``, computed once for the checks that inspect one rollout."""
        return self.run(jax.random.key(0), jax.random.key(1))

    def close(self) -> None:
        """Close every environment this probe made."""
        for env in self._made:
            env.close()
        self._made.clear()


__all__ = [
    "MakeEnv",
    "Options",
    "Probe",
    "Rollout",
    "VMAP_KEYS",
    "WithParams",
    "checked_rollout_fn",
    "first_steps",
    "in_space",
    "prefix",
    "random_step",
    "rollout",
    "rollout_fn",
    "rollout_keys",
    "space_names",
]
