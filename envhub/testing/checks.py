"""The checks: each inspects what a ``Probe`` computed and raises ``CheckFailure`` or ``CheckSkipped``.

A check builds no program of its own unless it tests something only its own program shows
(vmap, errors at trace time, close); everything else is sliced from the probe's shared rollouts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.types import TimeStep
from envhub.errors import ActionError, ClosedEnvironmentError
from envhub.testing.compare import (
    CheckFailure,
    CheckSkipped,
    batch_shape,
    check_reward_structure,
    require,
    same_structure,
    space_mismatch,
    trees_close,
)
from envhub.testing.compiled_checks import check_export, check_pure, check_refusal
from envhub.testing.episode_checks import check_autoreset, check_truncation
from envhub.testing.messages import first_set, rollout_axes, space_violation, summarize_tree, tree_difference
from envhub.testing.params_check import check_params
from envhub.testing.probe import (
    VMAP_KEYS,
    Probe,
    prefix,
    random_step,
    rollout_fn,
    rollout_keys,
    space_names,
)


def _run_difference(a: Any, b: Any, labels: tuple[str, str], probe: Probe, atol: float) -> str:
    """Where two rollouts ``(first, steps)`` of ``probe.env`` first differ (as ``trees_close`` compares)."""
    batch_ndim = len(batch_shape(probe.env))
    return (
        tree_difference(
            a[0], b[0], labels, root="init's TimeStep", axes=rollout_axes(batch_ndim, False), rule="close", atol=atol
        )
        or tree_difference(a[1], b[1], labels, root="TimeStep", axes=rollout_axes(batch_ndim), rule="close", atol=atol)
        or f"no leaf differs by more than atol={atol}"
    )


def _parts_difference(a: Any, b: Any, labels: tuple[str, str], atol: float) -> str:
    """Where the (init, step) TimeSteps of one unbatched env first differ."""
    return (
        tree_difference(a[0], b[0], labels, root="init's TimeStep", rule="close", atol=atol)
        or tree_difference(a[1], b[1], labels, root="the step's TimeStep", rule="close", atol=atol)
        or f"no leaf differs by more than atol={atol}"
    )


def _reset_violation(probe: Probe) -> str:
    """Why the obs ``probe.at_zero`` checked after its final reset is not in the space, recomputed (for a
    failure's message only: the probe keeps only whether it was inside)."""
    env, key = probe.env, jax.random.key(0)

    def run() -> Any:
        init_key, step_keys = rollout_keys(key, jax.random.key(1), probe.main_steps)
        state, _ = env.init(init_key)
        state, _ = jax.lax.scan(lambda s, k: (random_step(env, s, k)[0], None), state, step_keys)
        return env.reset(key, state)[1].obs

    obs = jax.jit(run)()
    axes = rollout_axes(len(batch_shape(env)), step=False)
    return space_violation(env.single_observation_space, obs, "obs", axes=axes) or summarize_tree(obs)


def check_spaces(probe: Probe) -> None:
    """Spaces are envhub spaces, samples lie inside them, and batched spaces lead with num_envs."""
    env = probe.env
    for name in space_names(env):
        space = getattr(env, name)
        require(isinstance(space, spaces.Space), f"env.{name} is {space!r}, not an envhub.spaces.Space")
    for name, (sample, inside) in probe.at_zero["samples"].items():
        if not inside:
            outside = space_violation(getattr(env, name), sample, "sample") or summarize_tree(sample)
            raise CheckFailure(f"env.{name}.sample() gave a value it does not contain: {outside}")
    if env.num_envs is not None:
        for leaf in jax.tree.leaves(probe.at_zero["samples"]["action_space"][0]):
            require(leaf.shape[:1] == (env.num_envs,), f"batched action leaf shape {leaf.shape} lacks num_envs")


def check_init(probe: Probe) -> None:
    """init gives obs in the space (bounds; ``structure`` checks exact dtypes and shapes), float32 zero reward, false bool flags, final_obs == obs."""
    ts = probe.at_zero["first"]
    require(isinstance(ts, TimeStep), f"init returned {type(ts).__name__}, not envhub.TimeStep")
    batch = batch_shape(probe.env)
    axes = rollout_axes(len(batch), step=False)
    check_reward_structure(probe.env, ts.reward)
    for path, reward in jax.tree_util.tree_flatten_with_path(ts.reward)[0]:
        require(
            reward.dtype == jnp.float32 and reward.shape == batch,
            f"reward must be float32 zeros of shape {batch} after init, got {reward.dtype} {reward.shape}",
        )
        nonzero = np.asarray(reward) != 0
        if np.any(nonzero):
            at = f" at {first_set(nonzero, axes)}" if batch else ""
            raise CheckFailure(
                f"reward must be float32 zeros after init, but reward{jax.tree_util.keystr(path)}{at} is "
                f"{np.asarray(reward)[nonzero].flat[0]}"
            )
    for flag in ("terminated", "truncated"):
        value = jnp.asarray(getattr(ts, flag))
        require(
            value.dtype == jnp.bool_ and value.shape == batch,
            f"{flag} must be bool of shape {batch}, got {value.dtype} {value.shape}",
        )
        if np.any(np.asarray(value)):
            at = f" (at {first_set(np.asarray(value), axes)})" if batch else ""
            raise CheckFailure(f"{flag} is set right after init{at}")
    require(
        probe.at_zero["init_inside"],
        lambda: (
            "init obs is not in observation_space: "
            f"{space_violation(probe.env.single_observation_space, ts.obs, 'obs', axes=axes) or summarize_tree(ts.obs)}"
        ),
    )
    require(
        trees_close(ts.final_obs, ts.obs, 0.0),
        lambda: (
            "after init, final_obs must equal obs: "
            f"{tree_difference(ts.final_obs, ts.obs, ('final_obs', 'obs'), axes=axes, rule='close', atol=0.0)}"
        ),
    )
    require(isinstance(ts.info, dict), f"info must be a dict, got {type(ts.info).__name__}")


def check_structure(probe: Probe) -> None:
    """obs and final_obs have exactly the observation space's pytree structure, shapes and dtypes at
    init, step and reset; (state, ts) have one pytree structure, shapes, dtypes and weak types from
    all three; the obs after reset lies in the observation space."""
    traced = probe.traced_first_steps  # traced, not compiled
    space = probe.env.observation_space
    for when in ("init", "step", "reset"):
        ts = traced[when][1]
        for field in ("obs", "final_obs"):
            mismatch = space_mismatch(space, getattr(ts, field), field)
            require(mismatch is None, f"at {when}, {mismatch}")
    same_structure(traced["init"], traced["step"], "init vs step")
    same_structure(traced["init"], traced["reset"], "init vs reset")
    require(
        probe.at_zero["reset_inside"],
        lambda: f"the obs after reset is not in observation_space: {_reset_violation(probe)}",
    )


def check_jit(probe: Probe) -> None:
    """A jitted scan rollout gives what an eager Python loop gives, for the same keys."""
    eager = rollout_fn(probe.env, 12, jit=False)(jax.random.key(0), jax.random.key(1))
    jitted = probe.at_zero
    jitted_steps, atol = prefix(jitted["steps"], 12), probe.options.atol
    require(
        trees_close(eager, (jitted["first"], jitted_steps), atol),
        lambda: (
            "jit(scan) rollout differs from the eager loop with the same keys: "
            + _run_difference(
                (jitted["first"], jitted_steps), eager, ("in jit(scan)", "in the eager loop"), probe, atol
            )
        ),
    )


def check_vmap(probe: Probe) -> None:
    """jax.vmap over an unbatched env matches per-key runs, or (host envs) raises naming num_envs."""
    env = probe.env
    if env.num_envs is not None:
        raise CheckSkipped(f"the env is batched (num_envs={env.num_envs}); vmapping it again is the user's choice")
    keys = jax.random.split(jax.random.key(5), VMAP_KEYS)
    try:
        batched = probe.vmapped_first_steps(keys)  # init, a step and reset of each key
    except Exception as exc:  # a host env may refuse vmap, but only with a clear pointer to num_envs
        require(not env.is_jax_native, f"vmap failed on a JAX-native env: {type(exc).__name__}: {exc}")
        require("num_envs" in str(exc), f"vmap over a host env must work or name num_envs; got: {exc}")
        return
    for i, key in enumerate(keys):
        state, first = env.init(key)  # eager, as a user running one env would
        alone = (first, env.step(key, state, env.action_space.sample(key))[1])
        mapped = jax.tree.map(lambda x, i=i: x[i], (batched["init"][1], batched["step"][1]))
        if not trees_close(mapped, alone, probe.options.atol):
            where = _parts_difference(mapped, alone, ("under vmap", "alone"), probe.options.atol)
            raise CheckFailure(f"vmap result {i} differs from running key {i} alone (mis-routed?): {where}")


def check_determinism(probe: Probe) -> None:
    """The same key gives the same trajectory; different keys give different ones."""
    actions = jax.random.key(99)  # the same actions every run: only the env's keys vary
    first, again = probe.run(jax.random.key(7), actions), probe.run(jax.random.key(7), actions)
    require(
        trees_close(first, again, 0.0),
        lambda: (
            "two runs with the same key gave different trajectories: "
            + _run_difference(
                (first["first"], first["steps"]), (again["first"], again["steps"]), ("in run 1", "in run 2"), probe, 0.0
            )
        ),
    )
    if probe.options.keys_matter:
        others = [probe.run(jax.random.key(seed), actions) for seed in (8, 9, 10)]
        require(
            any(not trees_close(first, other, 0.0) for other in others),
            "four different keys (same actions) gave identical trajectories; "
            "set Options(keys_matter=False) if the environment is deterministic by design",
        )


def check_errors(probe: Probe) -> None:
    """Bad actions raise ActionError at trace time; use after close raises ClosedEnvironmentError."""
    env = probe.fresh()
    key = jax.random.key(0)
    # A state of the shared env (its init is compiled once per probe): the refusals below come before
    # the state is read, and a closed env refuses before anything else.
    state, _ = probe.env.init(key)
    space = env.action_space
    good = space.sample(key)
    wrong_shape = jax.tree.map(lambda x: jnp.zeros((*x.shape, 3), x.dtype), good)
    try:
        jax.jit(env.step).trace(key, state, wrong_shape)
    except ActionError as exc:
        require("shape" in str(exc) or "structure" in str(exc), f"ActionError for a wrong shape does not say so: {exc}")
    else:
        raise CheckFailure("an action of the wrong shape was accepted")
    integer_leaves = [s for s in (space.leaves if isinstance(space, spaces.Tree) else [space]) if s.dtype.kind in "iu"]
    if integer_leaves and not isinstance(space, spaces.Tree):
        try:
            jax.jit(env.step).trace(key, state, jnp.asarray(good, jnp.float32))
        except ActionError as exc:
            require("integers" in str(exc), f"ActionError for floats does not say integers are needed: {exc}")
        else:
            raise CheckFailure("float actions were accepted for an integer action space")
    env.close()
    env.close()  # twice is harmless
    for call in (lambda: env.init(key), lambda: env.step(key, state, good), lambda: env.reset(key, state)):
        try:
            call()
        except ClosedEnvironmentError:
            continue
        raise CheckFailure("using an environment after close() did not raise ClosedEnvironmentError")


def check_close(probe: Probe) -> None:
    """close() frees host resources, through the context manager too; nothing stays alive."""
    with probe.fresh() as env:
        if not env.is_jax_native:  # host envs hold resources once they run (a JAX-native env holds none)
            env.init(jax.random.key(0))
    require(env.closed, "leaving `with envhub.make(...) as env` did not close the env")
    live = getattr(env.unwrapped, "live_host_envs", None)
    if callable(live):
        require(live() == 0, f"{live()} host environments still alive after close()")


CHECKS: dict[str, Callable[[Probe], None]] = {
    "spaces": check_spaces,
    "init": check_init,
    "structure": check_structure,
    "jit": check_jit,
    "vmap": check_vmap,
    "determinism": check_determinism,
    "autoreset": check_autoreset,
    "truncation": check_truncation,
    "errors": check_errors,
    "refusal": check_refusal,
    "pure": check_pure,
    "export": check_export,
    "params": check_params,
    "close": check_close,
}


__all__ = [
    "CHECKS",
    "check_autoreset",
    "check_close",
    "check_determinism",
    "check_errors",
    "check_init",
    "check_jit",
    "check_spaces",
    "check_structure",
    "check_truncation",
    "check_vmap",
]
