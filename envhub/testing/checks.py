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
    leaf_equal,
    mask_problem,
    require,
    same_structure,
    space_mismatch,
    trees_close,
)
from envhub.testing.compiled_checks import check_export, check_pure, check_refusal
from envhub.testing.params_check import check_params
from envhub.testing.probe import VMAP_KEYS, Probe, rollout_fn, space_names


def _prefix(tree: Any, length: int) -> Any:
    return jax.tree.map(lambda x: x[:length], tree)


def check_spaces(probe: Probe) -> None:
    """Spaces are envhub spaces, samples lie inside them, and batched spaces lead with num_envs."""
    env = probe.env
    for name in space_names(env):
        space = getattr(env, name)
        require(isinstance(space, spaces.Space), f"env.{name} is {space!r}, not an envhub.spaces.Space")
    for name, (sample, inside) in probe.at_zero["samples"].items():
        require(inside, f"env.{name}.sample() gave {sample!r}, which it does not contain")
    if env.num_envs is not None:
        for leaf in jax.tree.leaves(probe.at_zero["samples"]["action_space"][0]):
            require(leaf.shape[:1] == (env.num_envs,), f"batched action leaf shape {leaf.shape} lacks num_envs")


def check_init(probe: Probe) -> None:
    """init gives obs in the space (bounds; ``structure`` checks exact dtypes and shapes), float32 zero reward, false bool flags, final_obs == obs."""
    ts = probe.at_zero["first"]
    require(isinstance(ts, TimeStep), f"init returned {type(ts).__name__}, not envhub.TimeStep")
    batch = batch_shape(probe.env)
    check_reward_structure(probe.env, ts.reward)
    for reward in jax.tree.leaves(ts.reward):
        require(
            reward.dtype == jnp.float32 and reward.shape == batch and not bool(jnp.any(reward)),
            f"reward must be float32 zeros of shape {batch} after init, got {reward.dtype} {reward.shape}",
        )
    for flag in ("terminated", "truncated"):
        value = jnp.asarray(getattr(ts, flag))
        require(
            value.dtype == jnp.bool_ and value.shape == batch,
            f"{flag} must be bool of shape {batch}, got {value.dtype} {value.shape}",
        )
        require(not bool(jnp.any(value)), f"{flag} is set right after init")
    require(probe.at_zero["init_inside"], f"init obs {ts.obs!r} is not in {probe.env.observation_space!r}")
    require(trees_close(ts.final_obs, ts.obs, 0.0), "after init, final_obs must equal obs")
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
    require(probe.at_zero["reset_inside"], f"the obs after reset is not in {probe.env.observation_space!r}")


def check_jit(probe: Probe) -> None:
    """A jitted scan rollout gives what an eager Python loop gives, for the same keys."""
    eager = rollout_fn(probe.env, 12, jit=False)(jax.random.key(0), jax.random.key(1))
    jitted = probe.at_zero
    require(
        trees_close(eager, (jitted["first"], _prefix(jitted["steps"], 12)), probe.options.atol),
        "jit(scan) rollout differs from the eager loop with the same keys",
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
        require(
            trees_close(mapped, alone, probe.options.atol),
            f"vmap result {i} differs from running key {i} alone (mis-routed?)",
        )


def check_determinism(probe: Probe) -> None:
    """The same key gives the same trajectory; different keys give different ones."""
    actions = jax.random.key(99)  # the same actions every run: only the env's keys vary
    first, again = probe.run(jax.random.key(7), actions), probe.run(jax.random.key(7), actions)
    require(trees_close(first, again, 0.0), "two runs with the same key gave different trajectories")
    if probe.options.keys_matter:
        others = [probe.run(jax.random.key(seed), actions) for seed in (8, 9, 10)]
        require(
            any(not trees_close(first, other, 0.0) for other in others),
            "four different keys (same actions) gave identical trajectories; "
            "set Options(keys_matter=False) if the environment is deterministic by design",
        )


def check_autoreset(probe: Probe) -> None:
    """Same-step auto-reset: final_obs == obs unless done; both in the space; never both flags; legal-action
    masks in obs (multi-agent games) are bool, one per action, and allow some action."""
    options, keys = probe.options, (jax.random.key(11), jax.random.key(12))
    if options.time_limit_kwarg is None:
        num_steps = options.num_steps
        run = probe.run(*keys)
        steps, inside = _prefix(run["steps"], num_steps), _prefix(run["inside"], num_steps)
        batch_ndim = len(batch_shape(probe.env))
    else:
        num_steps = probe.limited_steps
        run = probe.run_limited(*keys)
        steps, inside = run["steps"], run["inside"]
        batch_ndim = np.ndim(steps.terminated) - 1
    terminated, truncated = np.asarray(steps.terminated), np.asarray(steps.truncated)
    done = terminated | truncated
    require(
        not np.any(terminated & truncated), "terminated and truncated are both set on one step (terminated must win)"
    )
    require(
        done.any(),
        f"no episode ended in {num_steps} random steps, so auto-reset could not be checked; "
        "set Options(time_limit_kwarg=...) or a larger num_steps",
    )
    same = leaf_equal(steps.final_obs, steps.obs, batch_ndim)
    require(np.all(same[~done]), "final_obs differs from obs on a step where the episode did not end")
    require(
        options.reset_obs_can_repeat or np.any(~same[done]),
        "on every step that ended an episode, obs == final_obs: no auto-reset happened",
    )
    require(np.all(inside["obs"]), "some obs lie outside observation_space")
    problem = mask_problem(probe.env, steps.obs)
    require(problem is None, f"legal-action masks: {problem}")
    require(np.all(inside["final_obs"]), "some final_obs lie outside observation_space")
    check_reward_structure(probe.env, steps.reward)
    for reward in jax.tree.leaves(steps.reward):
        require(
            reward.dtype == np.float32 and reward.shape == steps.terminated.shape,
            f"a step's reward is {reward.dtype} {reward.shape}, not float32 of the flags' shape {steps.terminated.shape}",
        )


def check_truncation(probe: Probe) -> None:
    """A time limit T truncates at exactly T steps (no dummy step), and final_obs is the reached obs."""
    options = probe.options
    if options.time_limit_kwarg is None:
        raise CheckSkipped("the env has no time-limit kwarg (Options.time_limit_kwarg is None)")
    limit, keys = options.time_limit, (jax.random.key(13), jax.random.key(14))
    short = probe.run_limited(*keys)["steps"]
    long = probe.run(*keys)["steps"]  # the default (longer) limit: the same trajectory until an end
    batch_ndim = np.ndim(short.terminated) - 1
    terminated, truncated = np.asarray(short.terminated), np.asarray(short.truncated)
    done = terminated | truncated
    # Episode lengths per environment: every truncation at exactly `limit`, none longer.
    lengths = np.zeros(done.shape[1:], int)
    for t in range(done.shape[0]):
        lengths = lengths + 1
        require(
            np.all(lengths <= limit),
            f"an episode ran past the time limit {limit} (at step {t + 1}): a missed truncation, "
            "or a dummy step after an auto-reset",
        )
        require(
            np.all(lengths[truncated[t]] == limit),
            f"truncated after {lengths[truncated[t]].tolist()} steps, but the limit is {limit} (dummy step?)",
        )
        lengths = np.where(done[t], 0, lengths)
    # Until its first episode ends, each environment follows the same trajectory in both runs, so
    # where the short run's first episode is cut by the limit (and the long run's goes on),
    # final_obs must be the long run's obs at that step.
    long_done = np.asarray(long.terminated[:limit]) | np.asarray(long.truncated[:limit])
    cut = truncated[limit - 1] & ~np.any(done[: limit - 1], axis=0) & ~np.any(long_done, axis=0)
    if np.any(cut) and not options.obs_depend_on_time_limit:

        def at_limit(tree: Any) -> Any:
            return jax.tree.map(lambda x: x[limit - 1 : limit], tree)

        # Two programs (two limits): equal up to rounding, not necessarily bit for bit.
        same = leaf_equal(at_limit(short.final_obs), at_limit(long.obs), batch_ndim, options.atol)[0]
        require(np.all(same[cut]), "final_obs at the time limit is not the observation the episode reached")


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
