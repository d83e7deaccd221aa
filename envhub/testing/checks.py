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
    position,
    require,
    same_structure,
    space_mismatch,
    space_violation,
    summarize_tree,
    tree_difference,
    trees_close,
)
from envhub.testing.compiled_checks import check_export, check_pure, check_refusal
from envhub.testing.params_check import check_params
from envhub.testing.probe import VMAP_KEYS, Probe, random_step, rollout_fn, rollout_keys, space_names


def _prefix(tree: Any, length: int) -> Any:
    return jax.tree.map(lambda x: x[:length], tree)


def _axes(batch_ndim: int, step: bool = True) -> tuple[str, ...]:
    """Names of a rollout's leading axes: ``step`` (if ``step``), then ``env`` for each batch axis."""
    return ("step",) * step + ("env",) * batch_ndim


def _obs_space(env: Any) -> spaces.Space:
    """The space of one env's obs (the batch axis is named in messages, not folded into the element index)."""
    return env.observation_space if env.num_envs is None else env.single_observation_space


def _first(flags: np.ndarray, axes: tuple[str, ...], first_step: int = 1) -> str:
    """The first position where ``flags`` is set, e.g. ``step 4, env 2``."""
    index = np.argwhere(flags)
    return position(tuple(int(i) for i in index[0]), axes, first_step) if len(index) else "?"


def _run_difference(a: Any, b: Any, labels: tuple[str, str], probe: Probe, atol: float) -> str:
    """Where two rollouts ``(first, steps)`` of ``probe.env`` first differ (as ``trees_close`` compares)."""
    batch_ndim = len(batch_shape(probe.env))
    return (
        tree_difference(
            a[0], b[0], labels, root="init's TimeStep", axes=_axes(batch_ndim, False), rule="close", atol=atol
        )
        or tree_difference(a[1], b[1], labels, root="TimeStep", axes=_axes(batch_ndim), rule="close", atol=atol)
        or f"no leaf differs by more than atol={atol}"
    )


def _parts_difference(a: Any, b: Any, labels: tuple[str, str], atol: float) -> str:
    """Where the (init, step) TimeSteps of one unbatched env first differ."""
    return (
        tree_difference(a[0], b[0], labels, root="init's TimeStep", rule="close", atol=atol)
        or tree_difference(a[1], b[1], labels, root="the step's TimeStep", rule="close", atol=atol)
        or f"no leaf differs by more than atol={atol}"
    )


def _ended(steps: TimeStep[Any], done: np.ndarray, axes: tuple[str, ...]) -> str:
    """The first step that ended an episode, with its obs (== final_obs) summarized."""
    index = tuple(int(i) for i in np.argwhere(done)[0])
    obs = summarize_tree(jax.tree.map(lambda x: np.asarray(x)[index], steps.obs))
    return f"{position(index, axes)}, where obs and final_obs are both {obs}"


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
    axes = _axes(len(batch_shape(env)), step=False)
    return space_violation(_obs_space(env), obs, "obs", axes=axes) or summarize_tree(obs)


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
    axes = _axes(len(batch), step=False)
    check_reward_structure(probe.env, ts.reward)
    for path, reward in jax.tree_util.tree_flatten_with_path(ts.reward)[0]:
        require(
            reward.dtype == jnp.float32 and reward.shape == batch,
            f"reward must be float32 zeros of shape {batch} after init, got {reward.dtype} {reward.shape}",
        )
        nonzero = np.asarray(reward) != 0
        if np.any(nonzero):
            at = f" at {_first(nonzero, axes)}" if batch else ""
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
            at = f" (at {_first(np.asarray(value), axes)})" if batch else ""
            raise CheckFailure(f"{flag} is set right after init{at}")
    require(
        probe.at_zero["init_inside"],
        lambda: (
            "init obs is not in observation_space: "
            f"{space_violation(_obs_space(probe.env), ts.obs, 'obs', axes=axes) or summarize_tree(ts.obs)}"
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
    jitted_steps, atol = _prefix(jitted["steps"], 12), probe.options.atol
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
    axes = _axes(batch_ndim)
    require(
        not np.any(terminated & truncated),
        lambda: (
            "terminated and truncated are both set on one step (terminated must win): "
            f"first at {_first(terminated & truncated, axes)}"
        ),
    )
    require(
        done.any(),
        f"no episode ended in {num_steps} random steps, so auto-reset could not be checked; "
        "set Options(time_limit_kwarg=...) or a larger num_steps",
    )
    same = leaf_equal(steps.final_obs, steps.obs, batch_ndim)
    require(
        np.all(same[~done]),
        lambda: (
            "final_obs differs from obs on a step where the episode did not end: "
            f"{tree_difference(steps.final_obs, steps.obs, ('final_obs', 'obs'), axes=axes, where=~done)}"
        ),
    )
    require(
        options.reset_obs_can_repeat or np.any(~same[done]),
        lambda: (
            "on every step that ended an episode, obs == final_obs: no auto-reset happened "
            f"(the first: {_ended(steps, done, axes)}; final_obs must be the obs the episode reached, "
            "obs the new episode's first)"
        ),
    )
    space = _obs_space(probe.env)
    require(
        np.all(inside["obs"]),
        lambda: f"some obs lie outside observation_space: {space_violation(space, steps.obs, 'obs', axes=axes)}",
    )
    problem = mask_problem(probe.env, steps.obs, axes)
    require(problem is None, f"legal-action masks: {problem}")
    require(
        np.all(inside["final_obs"]),
        lambda: (
            "some final_obs lie outside observation_space: "
            f"{space_violation(space, steps.final_obs, 'final_obs', axes=axes)}"
        ),
    )
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
    env_axes = _axes(batch_ndim, step=False)
    for t in range(done.shape[0]):
        lengths = lengths + 1
        if not np.all(lengths <= limit):
            env = f", {_first(lengths > limit, env_axes)}" if batch_ndim else ""
            raise CheckFailure(
                f"an episode ran past the time limit {limit} (at step {t + 1}{env}): a missed truncation, "
                "or a dummy step after an auto-reset"
            )
        early = truncated[t] & (lengths != limit)
        if np.any(early):
            env = f", {_first(early, env_axes)}" if batch_ndim else ""
            raise CheckFailure(
                f"truncated after {np.asarray(lengths)[early].flat[0]} steps (at step {t + 1}{env}), "
                f"but the limit is {limit} (dummy step?)"
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
        require(
            np.all(same[cut]),
            lambda: (
                "final_obs at the time limit is not the observation the episode reached (obs, in a run with a "
                "longer limit): "
                + str(
                    tree_difference(
                        at_limit(short.final_obs),
                        at_limit(long.obs),
                        ("final_obs", "obs"),
                        axes=_axes(batch_ndim),
                        atol=options.atol,
                        where=cut[None],
                        first_step=limit,
                    )
                )
            ),
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
