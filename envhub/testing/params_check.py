"""The ``params`` check: per-env parameters reach each env, and new values never compile again.

One program (init with params, a few steps, a reset with params) runs three times on one batch of
two or more envs: every env with the defaults, every env with varied params (``varied_params``: float
leaves scaled by 1.25), and half and half. It must compile once (jit's cache holds one entry), the
mixed run's env ``i`` must equal env ``i`` of the run that gave every env its params, and the varied
run must differ from the default one somewhere (else the backend ignores its params). An unbatched
env is batched the way users do it, ``jax.vmap`` over keys and params.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.testing.compare import CheckFailure, CheckSkipped, require
from envhub.testing.probe import Probe

#: Steps of the check's rollout.
STEPS = 4
#: Envs of the batch when the env under test is unbatched.
ROWS = 2


def varied_params(default: Any) -> Any | None:
    """``default`` with every floating leaf scaled by 1.25; ``None`` when it has no floating leaf."""
    if not any(jnp.issubdtype(jnp.asarray(x).dtype, jnp.floating) for x in jax.tree.leaves(default)):
        return None
    return jax.tree.map(lambda x: x * 1.25 if jnp.issubdtype(jnp.asarray(x).dtype, jnp.floating) else x, default)


def check_params(probe: Probe) -> None:
    """Per-env params reach each env (env ``i`` of a mixed batch equals env ``i`` of a uniform one), varied params
    change the rollout, and init, step and reset compile once for every params value (jit's cache size stays 1)."""
    env = probe.env
    default = env.default_params
    if default is None:
        raise CheckSkipped(f"{env.id!r} has no parameters (default_params is None): there is nothing to pass")
    if not probe.options.params:
        raise CheckSkipped("Options(params=False): the plugin turned the params check off for this env")
    variant = probe.options.params_variant
    varied = varied_params(default) if variant is None else variant(default)
    if varied is None:
        raise CheckSkipped(
            "default_params has no floating leaf to vary (the check scales floats by 1.25); "
            "give Options(params_variant=...) to vary others"
        )
    rows = env.num_envs or ROWS
    stacked = lambda p: jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x), (rows, *np.shape(x))), p)  # noqa: E731
    base, other = stacked(default), stacked(varied)
    odd = jnp.arange(rows) % 2 == 1
    mixed = jax.tree.map(lambda a, b: jnp.where(odd.reshape((rows,) + (1,) * (a.ndim - 1)), b, a), base, other)

    def one(key: jax.Array, params: Any) -> Any:
        state, first = env.init(key, params=params)
        action = env.action_space.sample(jax.random.key(1))

        def body(state: Any, k: jax.Array) -> tuple[Any, Any]:
            state, ts = env.step(k, state, action)
            return state, (ts.obs, ts.reward)

        state, steps = jax.lax.scan(body, state, jax.random.split(jax.random.fold_in(key, 1), STEPS))
        if env.num_envs is not None:  # env first, as jax.vmap puts it for an unbatched env
            steps = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), steps)
        _, again = env.reset(jax.random.fold_in(key, 2), state, params=params)
        return first.obs, steps, again.obs

    key = jax.random.key(3)
    if env.num_envs is None:
        run = jax.jit(lambda k, p: jax.vmap(one)(jax.random.split(k, rows), p))
    else:
        run = jax.jit(one)
    outs = {name: jax.device_get(run(key, p)) for name, p in (("default", base), ("varied", other), ("mixed", mixed))}
    size = run._cache_size()
    require(size == 1, f"init, step and reset compiled {size} times for 3 params values of one shape: want once")
    if _rows_equal(outs["default"], outs["varied"], slice(None), probe.options.atol):
        how = "every float leaf of default_params scaled by 1.25" if variant is None else "Options.params_variant"
        raise CheckFailure(
            f"{how} gave the same init, {STEPS} steps and reset as the defaults: the backend ignores the params it is "
            f"given (give _reset_one/_step_one the params argument, not its own defaults), or they act later "
            f"(give Options(params_variant=...) a variant that shows at once)"
        )
    for i in range(rows):
        want = outs["varied" if i % 2 else "default"]
        require(
            _rows_equal(outs["mixed"], want, i, probe.options.atol),
            f"env {i} of a batch with per-env params differs from env {i} of a batch giving every env its params: "
            f"params reach the wrong env (a per-env leaf must lead with num_envs)",
        )


def _rows_equal(a: Any, b: Any, row: Any, atol: float) -> bool:
    """Whether env ``row`` (every leaf leads with the batch) of two outputs agrees; ``slice(None)``: all envs."""
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        x, y = np.asarray(x, float)[row], np.asarray(y, float)[row]
        if not np.allclose(x, y, atol=atol, equal_nan=True):
            return False
    return True


__all__ = ["check_params", "varied_params"]
