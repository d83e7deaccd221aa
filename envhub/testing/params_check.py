"""The ``params`` check: per-env parameters reach each env, and new values never compile again.

First, without running anything, the env's ``params_bounds`` must name only leaves its ``default_params`` has and
the defaults must lie within them (``envhub.core.bounds``). Then it reuses the probe's rollout (init, ``main_steps`` steps, reset), whose params are an input of the
program (``Probe.run``): it runs it again with varied params (``varied_params``: float leaves scaled by
1.25, or ``Options.params_variant``) and, for a batched env, with half the envs varied. The program must
still be compiled once, the varied rollout must differ from the default one (else the backend ignores
its params), and env ``i`` of the mixed batch must equal env ``i`` of the batch that gave every env its
params, up to the first episode end (after it, which spare initial state an env gets depends on when
the others ended). Costs two or three runs of a compiled program, no compile.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.core.bounds import bounds_rule, first_outside, leaf_ranges
from envhub.core.params import per_env
from envhub.errors import InvalidArgumentError
from envhub.testing.compare import CheckFailure, CheckSkipped, require
from envhub.testing.messages import tree_difference
from envhub.testing.probe import Probe


def varied_params(default: Any) -> Any | None:
    """``default`` with every floating leaf scaled by 1.25; ``None`` when it has no floating leaf."""
    if not any(jnp.issubdtype(jnp.asarray(x).dtype, jnp.floating) for x in jax.tree.leaves(default)):
        return None
    return jax.tree.map(lambda x: x * 1.25 if jnp.issubdtype(jnp.asarray(x).dtype, jnp.floating) else x, default)


def check_params(probe: Probe) -> None:
    """params_bounds follow default_params and hold for the defaults, varied params change the rollout, per-env
    params reach each env (env ``i`` of a mixed batch equals env ``i`` of a uniform one), and init, step and reset
    compile once for every params value."""
    env = probe.env
    if env.default_params is None:
        raise CheckSkipped(f"{env.id!r} has no parameters (default_params is None): there is nothing to pass")
    if not probe.options.params:
        raise CheckSkipped("Options(params=False): the plugin turned the params check off for this env")
    check_bounds_hold(env)
    default = probe.run.default
    variant = probe.options.params_variant
    if variant is None and varied_params(default) is None:
        raise CheckSkipped(
            "default_params has no floating leaf to vary (the check scales floats by 1.25); "
            "give Options(params_variant=...) to vary others"
        )
    other = (
        varied_params(default)
        if variant is None
        else per_env(env.default_params, _with(env.default_params, variant), env.num_envs)
    )
    other = jax.tree.map(lambda d, x: jnp.asarray(x, d.dtype), default, other)  # one dtype: one program
    keys = (jax.random.key(0), jax.random.key(1))
    base_run, varied_run = probe.at_zero, probe.run(*keys, other)
    base, varied = _observed(base_run), _observed(varied_run)
    if _rows_equal(base, varied, slice(None), probe.options.atol):
        how = "every float leaf of default_params scaled by 1.25" if variant is None else "Options.params_variant"
        raise CheckFailure(
            f"{how} gave the same rollout ({probe.main_steps} steps and a reset) as the defaults: the backend ignores "
            f"the params it is given (give _reset_one/_step_one the params argument, not its own defaults), or they "
            f"act too rarely to show (give Options(params_variant=...) a variant that shows at once)"
        )
    if env.num_envs is not None and env.num_envs > 1:
        odd = jnp.arange(env.num_envs) % 2 == 1
        mixed = jax.tree.map(lambda a, b: jnp.where(odd.reshape((-1,) + (1,) * (a.ndim - 1)), b, a), default, other)
        # Until an episode ends: then spare resets depend on when the others ended (envhub.native.resets).
        mixed_run = probe.run(*keys, mixed)
        until = _first_end(base_run, varied_run, mixed_run)  # the step before any env's reset
        out, base, varied = (_observed(r, until) for r in (mixed_run, base_run, varied_run))
        for i in range(env.num_envs):
            want = varied if i % 2 else base
            row = lambda tree, i=i: jax.tree.map(lambda x: np.asarray(x)[i], tree)  # noqa: E731

            def wrong_env(i: int = i, want: Any = want, row: Any = row) -> str:
                return (
                    f"env {i} of a batch with per-env params differs from env {i} of a batch giving every env its "
                    f"params: params reach the wrong env: "
                    + str(
                        tree_difference(
                            row(out),
                            row(want),
                            ("with per-env params", "with uniform params"),
                            root="rollout",
                            rule="close",
                            atol=probe.options.atol,
                        )
                    )
                )

            require(_rows_equal(out, want, i, probe.options.atol), wrong_env)
    size = probe.run.cache_size()
    require(
        size == 1, f"the probe's rollout (init, step, reset) compiled {size} times for new params values: want once"
    )


def check_bounds_hold(env: Any) -> None:
    """``env.params_bounds`` name only leaves ``env.default_params`` has, and every default lies within them."""
    default = env.default_params
    try:
        ranges = leaf_ranges(env.id, default, env.params_bounds)
    except InvalidArgumentError as exc:
        raise CheckFailure(str(exc)) from exc
    leaves = jax.tree.leaves(default)
    for i, name, bounds in ranges:
        bad = first_outside(leaves[i], bounds)
        if bad is not None:
            raise CheckFailure(
                f"the default {name} is {bad!r}, outside the env's own params_bounds ({bounds_rule(bounds)}), so its "
                f"defaults given back (init(key, params=env.default_params)) are refused: widen the bounds or fix the default"
            )


def _with(params: Any, values: dict[str, Any]) -> Any:
    """``params`` with the fields (a dataclass with ``replace``) or keys (a dict) in ``values`` set."""
    return params.replace(**values) if hasattr(params, "replace") else {**params, **values}


def _observed(run: Any, steps: int | None = None) -> dict[str, Any]:
    """What a rollout shows, env first: init's obs, then of its first ``steps`` steps the obs, final obs, reward and
    flags (``(envs, steps, ...)``)."""
    ts = run["steps"]
    env_first = lambda x: jnp.moveaxis(x[:steps], 0, 1) if x.ndim > 1 else x[:steps]  # noqa: E731
    shown = {
        name: jax.tree.map(env_first, getattr(ts, name))
        for name in ("obs", "final_obs", "reward", "terminated", "truncated")
    }
    return jax.device_get({"init obs": run["first"].obs, **shown})


def _first_end(*runs: Any) -> int:
    """The first step at which any env of any of ``runs`` ended an episode (the rollout's length if none did)."""
    done = np.stack(
        [
            np.asarray(r["steps"].terminated | r["steps"].truncated).reshape(len(r["steps"].reward), -1).any(1)
            for r in runs
        ]
    )
    ends = np.flatnonzero(done.any(0))
    return int(ends[0]) if ends.size else done.shape[1]


def _rows_equal(a: Any, b: Any, row: Any, atol: float) -> bool:
    """Whether env ``row`` (every leaf leads with the batch) of two outputs agrees; ``slice(None)``: all envs."""
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        x, y = np.asarray(x, float)[row], np.asarray(y, float)[row]
        if not np.allclose(x, y, atol=atol, equal_nan=True):
            return False
    return True


__all__ = ["check_bounds_hold", "check_params", "varied_params"]
