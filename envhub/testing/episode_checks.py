"""The episode checks: same-step auto-reset (``autoreset``) and the time limit as truncation (``truncation``)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub.core.types import TimeStep
from envhub.testing.compare import (
    CheckFailure,
    CheckSkipped,
    batch_shape,
    check_reward_structure,
    leaf_equal,
    mask_problem,
    require,
)
from envhub.testing.messages import first_set, position, rollout_axes, space_violation, summarize_tree, tree_difference
from envhub.testing.probe import Probe, prefix


def _ended(steps: TimeStep[Any], done: np.ndarray, axes: tuple[str, ...]) -> str:
    """The first step that ended an episode, with its obs (== final_obs) summarized."""
    index = tuple(int(i) for i in np.argwhere(done)[0])
    obs = summarize_tree(jax.tree.map(lambda x: np.asarray(x)[index], steps.obs))
    return f"{position(index, axes)}, where obs and final_obs are both {obs}"


def check_autoreset(probe: Probe) -> None:
    """Same-step auto-reset: final_obs == obs unless done; both in the space; never both flags; legal-action
    masks in obs (multi-agent games) are bool, one per action, and allow some action."""
    options, keys = probe.options, (jax.random.key(11), jax.random.key(12))
    if options.time_limit_kwarg is None:
        num_steps = options.num_steps
        run = probe.run(*keys)
        steps, inside = prefix(run["steps"], num_steps), prefix(run["inside"], num_steps)
        batch_ndim = len(batch_shape(probe.env))
    else:
        num_steps = probe.limited_steps
        run = probe.run_limited(*keys)
        steps, inside = run["steps"], run["inside"]
        batch_ndim = np.ndim(steps.terminated) - 1
    terminated, truncated = np.asarray(steps.terminated), np.asarray(steps.truncated)
    done = terminated | truncated
    axes = rollout_axes(batch_ndim)
    require(
        not np.any(terminated & truncated),
        lambda: (
            "terminated and truncated are both set on one step (terminated must win): "
            f"first at {first_set(terminated & truncated, axes)}"
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
    space = probe.env.single_observation_space
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
    env_axes = rollout_axes(batch_ndim, step=False)
    for t in range(done.shape[0]):
        lengths = lengths + 1
        if not np.all(lengths <= limit):
            env = f", {first_set(lengths > limit, env_axes)}" if batch_ndim else ""
            raise CheckFailure(
                f"an episode ran past the time limit {limit} (at step {t + 1}{env}): a missed truncation, "
                "or a dummy step after an auto-reset"
            )
        early = truncated[t] & (lengths != limit)
        if np.any(early):
            env = f", {first_set(early, env_axes)}" if batch_ndim else ""
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
                        axes=rollout_axes(batch_ndim),
                        atol=options.atol,
                        where=cut[None],
                        first_step=limit,
                    )
                )
            ),
        )


__all__ = ["check_autoreset", "check_truncation"]
