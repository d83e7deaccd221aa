"""Environment parameters as data: the one check of params passed to ``init``, ``reset`` and ``set_params``.

An env that has parameters shows them as ``env.default_params`` (a pytree). Params passed in must
have that structure; each leaf has the default's shape (one value for every env) or, for a batched
env, leads with ``num_envs`` (one value per env); its dtype is cast to the default's where that is
safe (``same_kind``: an int for a float leaf, never a float for an int leaf). Shape and structure are
checked while tracing, so ``jit`` refuses them with the same message; values against the backend's
bounds (``params_bounds``: a negative mass) only where they are concrete, at no cost in compiled code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.errors import InvalidArgumentError

#: ``(low, high)`` a leaf's values must lie in (``None``: unbounded on that side), keyed by its leaf name.
Bounds = Mapping[str, tuple[float | None, float | None]]


def leaf_name(path: Any) -> str:
    """``params.gravity``, ``params['body_mass']``: how messages (and ``params_bounds``) name a leaf."""
    return "params" + jax.tree_util.keystr(path)


def checked_params(env_id: str, default: Any, params: Any, num_envs: int | None, bounds: Bounds | None = None) -> Any:
    """``params`` with every leaf cast to its default's dtype, after checking structure, shapes and bounds.

    Raises:
        InvalidArgumentError: the env has no parameters, a structure other than ``default``'s, a leaf of
            another shape or of a dtype that cannot be cast, a value outside ``bounds`` (eager calls only).
    """
    if default is None:
        raise InvalidArgumentError(
            f"params were given, but {env_id!r} has no parameters (its default_params is None); "
            f"leave params out, or set what it has through envhub.make's kwargs (docs/params.md)."
        )
    want, got = jax.tree.structure(default), jax.tree.structure(params)
    if want != got:
        raise InvalidArgumentError(
            f"params of {env_id!r} have the structure {got}, not that of env.default_params ({want}); "
            f"build them from the defaults, e.g. env.default_params.replace(...) or jax.tree.map over it (docs/params.md)."
        )
    leaves = jax.tree_util.tree_flatten_with_path(default)[0]
    cast = [_leaf(env_id, leaf_name(p), d, x, num_envs) for (p, d), x in zip(leaves, jax.tree.leaves(params))]
    if bounds:
        _check_bounds(env_id, {leaf_name(p): x for (p, _), x in zip(leaves, cast)}, bounds)
    return jax.tree.unflatten(want, cast)


def per_env(default: Any, params: Any, num_envs: int | None) -> Any:
    """Checked ``params`` with every leaf given its ``num_envs`` axis (a shared value repeated), as states keep them."""
    if num_envs is None:
        return params
    return jax.tree.map(lambda d, x: jnp.broadcast_to(x, (num_envs, *np.shape(d))), default, params)


def as_arrays(default: Any) -> Any:
    """``default`` with every leaf a strongly typed array (Python numbers in gymnax's EnvParams included)."""
    return jax.tree.map(lambda x: jnp.asarray(x, _dtype(x)), default)


def _dtype(x: Any) -> np.dtype:
    return jnp.asarray(x).dtype


def _leaf(env_id: str, name: str, default: Any, value: Any, num_envs: int | None) -> jax.Array:
    want, shape = _dtype(default), np.shape(default)
    try:
        array = jnp.asarray(value)
    except TypeError as e:
        raise InvalidArgumentError(f"{name}={value!r} of {env_id!r} is not an array: give a {want} value.") from e
    if not jnp.can_cast(array.dtype, want, casting="same_kind") and not _python_number_fits(value, want):
        raise InvalidArgumentError(
            f"{name} of {env_id!r} has dtype {array.dtype}, which cannot be cast safely to its dtype {want}; "
            f"give {want} values."
        )
    allowed = [shape] if num_envs is None else [shape, (num_envs, *shape)]
    if array.shape not in allowed:
        per_env = "" if num_envs is None else f" (one value for every env) or {(num_envs, *shape)} (one per env)"
        raise InvalidArgumentError(
            f"{name} of {env_id!r} has shape {array.shape}; it takes shape {shape}{per_env}. "
            f"Reshape it, or build it from env.default_params."
        )
    return array.astype(want)


def _python_number_fits(value: Any, want: np.dtype) -> bool:
    """A Python float with an integral value (``500.0``) is taken for an int leaf, as ``make``'s kwargs are."""
    return isinstance(value, float) and value.is_integer() and jnp.issubdtype(want, jnp.integer)


def _check_bounds(env_id: str, leaves: dict[str, jax.Array], bounds: Bounds) -> None:
    for name, (low, high) in bounds.items():
        value = leaves.get(name)
        if value is None or isinstance(value, jax.core.Tracer):
            continue  # traced: checked by no one (values are free only where concrete)
        array = np.asarray(value)
        bad = (array < low if low is not None else False) | (array > high if high is not None else False)
        if np.any(bad):
            rule = " and ".join(
                s for s in (f">= {low}" if low is not None else "", f"<= {high}" if high is not None else "") if s
            )
            raise InvalidArgumentError(
                f"{name} of {env_id!r} has the value {array[bad].flat[0].item()!r}; it must be {rule}. Give values in that range."
            )


__all__ = ["Bounds", "as_arrays", "checked_params", "leaf_name", "per_env"]
