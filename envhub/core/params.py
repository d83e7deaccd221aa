"""Environment parameters as data: the one check of params passed to ``init``, ``reset`` and ``set_params``.

An env that has parameters shows them as ``env.default_params`` (a pytree). Params passed in must
have that structure; each leaf has the default's shape (one value for every env) or, for a batched
env, leads with ``num_envs`` (one value per env); its dtype is cast to the default's where that is
safe (``same_kind``: an int for a float leaf, never a float for an int leaf). Shape and structure are
checked while tracing, so ``jit`` refuses them with the same message; values (NaN or an infinity, an int too big
for its leaf, the backend's ``params_bounds``: a negative mass) only where they are concrete, at no cost in
compiled code. ``where`` of ``reset`` and ``set_params`` (``checked_where``) is a bool mask of the batch shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.core.bounds import Bounds, Range, bounds_rule, first_outside, leaf_name, leaf_ranges
from envhub.core.tree import same_structure
from envhub.errors import InvalidArgumentError


def checked_params(
    env_id: str, default: Any, params: Any, num_envs: int | None, bounds: Bounds | Mapping[str, Range] | None = None
) -> Any:
    """``params`` with every leaf cast to its default's dtype, after checking structure, shapes and bounds.

    Raises:
        InvalidArgumentError: the env has no parameters, a structure other than ``default``'s (the message names
            the first difference), a leaf of another shape or of a dtype that cannot be cast (a bool for a number
            included); on eager calls only, a value that does not fit the leaf's integer dtype, a NaN (or an
            infinity where the default is finite), a value outside ``bounds`` (``envhub.core.bounds``).
    """
    if default is None:
        raise InvalidArgumentError(
            f"params were given, but {env_id!r} has no parameters (its default_params is None); "
            f"leave params out, or set what it has through envhub.make's kwargs (docs/params.md)."
        )
    want: Any = jax.tree.structure(default)  # Any: jaxlib's PyTreeDef has no type mypy resolves (core.tree)
    if not same_structure(default, params):
        got = jax.tree.structure(params)
        difference = _difference(default, params, "params") or f"env.default_params is {want}"
        raise InvalidArgumentError(
            f"params of {env_id!r} have the structure {got}, not that of env.default_params: {difference}; "
            f"build them from the defaults, e.g. env.default_params.replace(...) or jax.tree.map over it (docs/params.md)."
        )
    leaves = jax.tree_util.tree_flatten_with_path(default)[0]
    cast = [_leaf(env_id, leaf_name(p), d, x, num_envs) for (p, d), x in zip(leaves, jax.tree.leaves(params))]
    for (p, d), x in zip(leaves, cast):
        _check_finite(env_id, leaf_name(p), d, x)
    for i, name, leaf_bounds in leaf_ranges(env_id, default, bounds):
        bad = first_outside(cast[i], leaf_bounds)
        if bad is not None:
            rule = bounds_rule(leaf_bounds)
            raise InvalidArgumentError(
                f"{name} of {env_id!r} has the value {bad!r}; it must be {rule} (env.params_bounds). "
                f"Give values in that range."
            )
    return jax.tree.unflatten(want, cast)


def checked_where(env_id: str, method: str, where: Any, num_envs: int | None) -> jax.Array:
    """``where`` of ``reset``/``set_params`` as a bool array, after checking it is a bool mask of the batch shape.

    Checked while tracing too (dtype and shape are known there): an int or float mask (``[0, 1, 2]`` would be read as
    flags, not indices), a mask of another length, or a scalar on a batched env would reset the wrong envs or
    broadcast the state to a new shape, so each is refused.

    Raises:
        InvalidArgumentError: ``where`` is not an array of bools, or its shape is not ``()`` (one env) or
            ``(num_envs,)`` (a batch).
    """
    shape = () if num_envs is None else (num_envs,)
    if num_envs is None:
        wanted, fix = "a bool scalar (this env is unbatched)", "e.g. ts.done"
    else:
        wanted, fix = (
            f"a bool array of shape {shape}, one flag per env",
            f"e.g. ts.done, or jnp.arange({num_envs}) == i",
        )
    try:
        array = where if isinstance(where, (jax.Array, np.ndarray)) else jnp.asarray(where)
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(
            f"{method}(where={where!r}) of {env_id!r}: where is not an array; it takes {wanted} ({fix}), "
            f"or leave it out to {_every(method)}."
        ) from e
    if array.dtype != np.bool_:
        raise InvalidArgumentError(
            f"{method}(where=...) of {env_id!r}: where has dtype {array.dtype}; it takes {wanted}, True for the envs "
            f"to change (indices and 0/1 are not flags): {fix}, or where.astype(bool) for 0/1 values."
        )
    if array.shape != shape:
        raise InvalidArgumentError(
            f"{method}(where=...) of {env_id!r}: where has shape {array.shape}; it takes {wanted} ({fix}), "
            f"or leave it out to {_every(method)}."
        )
    return jnp.asarray(array)


def _every(method: str) -> str:
    return "reset every env" if method == "reset" else "set the params of every env"


def _difference(default: Any, params: Any, name: str) -> str | None:
    """The first place where ``params`` leaves ``default``'s structure, in words (``None``: none found)."""

    def one_level(tree: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        children, treedef = jax.tree_util.tree_flatten_with_path(tree, is_leaf=lambda node: node is not tree)
        return treedef, children

    want_def, want_children = one_level(default)
    got_def, got_children = one_level(params)
    if want_def.num_nodes == 1 and want_def.num_leaves == 1:  # a leaf of the defaults: params hold a node here
        if params is None:
            return f"{name} is None where a value is needed"
        if isinstance(params, (list, tuple)):
            return f"{name} is a {type(params).__name__} where an array is needed (give jnp.asarray({name}))"
        return f"{name} is a {type(params).__name__} where an array is needed"
    if params is None or (got_def.num_nodes == 1 and got_def.num_leaves == 1):
        return f"{name} is {_kind(params)} where env.default_params{name[len('params') :]} is {_kind(default)}"
    if type(params) is not type(default):
        return f"{name} is {_kind(params)} where env.default_params{name[len('params') :]} is {_kind(default)}"
    want_keys = [jax.tree_util.keystr(p) for p, _ in want_children]
    got_keys = [jax.tree_util.keystr(p) for p, _ in got_children]
    if want_keys != got_keys:
        missing = [k for k in want_keys if k not in got_keys]
        unknown = [k for k in got_keys if k not in want_keys]
        parts = ([f"missing {', '.join(name + k for k in missing)}"] if missing else []) + (
            [f"unknown {', '.join(name + k for k in unknown)}"] if unknown else []
        )
        return "; ".join(parts) or f"{name} has its entries in another order"
    for (path, want_child), (_, got_child) in zip(want_children, got_children):
        if not same_structure(want_child, got_child):
            return _difference(want_child, got_child, name + jax.tree_util.keystr(path))
    return None


def _kind(tree: Any) -> str:
    if tree is None:
        return "None"
    kind = type(tree)
    same_name = kind.__qualname__ in ("EnvParams", "Params")
    return f"a {kind.__module__ + '.' if same_name else ''}{kind.__qualname__}"


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
    _check_fits(env_id, name, value, want)
    try:
        array = jnp.asarray(value)
    except OverflowError as e:
        raise InvalidArgumentError(
            f"{name}={value!r} of {env_id!r} does not fit any array dtype: give a {want} value."
        ) from e
    except (TypeError, ValueError) as e:
        raise InvalidArgumentError(f"{name}={value!r} of {env_id!r} is not an array: give a {want} value.") from e
    if not _castable(array.dtype, want) and not _python_number_fits(value, want):
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


def _castable(have: Any, want: np.dtype) -> bool:
    """``same_kind`` casting, except a bool for a number (``True`` is no mass) and keys only for keys."""
    extended = jax.dtypes.extended
    if jnp.issubdtype(have, extended) or jnp.issubdtype(want, extended):
        return bool(have == want)
    if have == np.bool_ and want != np.bool_:
        return False
    return bool(jnp.can_cast(have, want, casting="same_kind"))


def _check_fits(env_id: str, name: str, value: Any, want: np.dtype) -> None:
    """Refuse a concrete number that a cast would change beyond rounding: an integer outside an int leaf's dtype
    (2**32 + 5 would become 5), for a float leaf an integer outside the int dtype JAX holds it in first (without
    x64, ``np.int64(2**40)`` became 0.0), or a float beyond a float leaf's range (it would become inf)."""
    if isinstance(value, (bool, jax.core.Tracer)) or not isinstance(
        value, (int, float, np.number, np.ndarray, jax.Array)
    ):
        return
    if hasattr(value, "dtype") and not jnp.issubdtype(value.dtype, jnp.number):
        return  # bools, keys: the dtype check refuses them
    array = None if isinstance(value, int) else np.asarray(value)
    kind = "i" if array is None else array.dtype.kind
    if array is not None and (array.size == 0 or kind not in "iuf"):
        return  # complex: the dtype check refuses it
    if array is not None and kind == "f":
        _check_float_range(env_id, name, array, want)
        return
    low, high = (int(value), int(value)) if array is None else (int(array.min()), int(array.max()))
    if jnp.issubdtype(want, jnp.integer):
        held = want
    elif jnp.issubdtype(want, jnp.inexact):  # JAX holds an integer in its int dtype before the cast to a float
        held = jax.dtypes.canonicalize_dtype(np.int64 if array is None else array.dtype)
    else:
        return
    info = np.iinfo(held)
    if low >= info.min and high <= info.max:
        return
    bad = low if low < info.min else high
    if held == want:
        raise InvalidArgumentError(
            f"{name} of {env_id!r} has the value {bad}, which does not fit its dtype {want} "
            f"(from {info.min} to {info.max}); give values in that range."
        )
    largest = float(np.finfo(want).max)  # a Python float: compared with any int exactly, without overflow
    fix = (
        f"give it as a float ({float(bad)!r})"
        if abs(bad) <= largest
        else f"give a value {want} holds (at most {largest:.7g})"
    )
    raise InvalidArgumentError(
        f"{name} of {env_id!r} has the integer value {bad}, outside {held} (from {info.min} to {info.max}), which JAX "
        f"holds integers in before the cast to its dtype {want}: it would wrap; {fix}."
    )


def _check_float_range(env_id: str, name: str, array: np.ndarray, want: np.dtype) -> None:
    """Refuse a finite float beyond a float leaf's dtype (``1e300`` for a float32 leaf would become inf)."""
    if not jnp.issubdtype(want, jnp.floating) or np.finfo(array.dtype).max <= np.finfo(want).max:
        return
    largest = np.finfo(want).max
    big = array[np.isfinite(array) & (np.abs(array) > largest)]
    if big.size:
        raise InvalidArgumentError(
            f"{name} of {env_id!r} has the value {big.flat[0].item()!r}, beyond its dtype {want} (at most "
            f"{largest:.7g} either way), where it would be inf; give values within that range."
        )


def _check_finite(env_id: str, name: str, default: Any, value: jax.Array) -> None:
    """Refuse a concrete NaN, or an infinity in a leaf whose default is finite (the dynamics would turn to NaN)."""
    if isinstance(value, jax.core.Tracer) or not jnp.issubdtype(value.dtype, jnp.inexact):
        return
    array = np.asarray(value)
    finite_default = bool(np.all(np.isfinite(np.asarray(default))))
    bad = np.isnan(array) | (np.isinf(array) if finite_default else False)
    if np.any(bad):
        rule = "finite" if finite_default else "a number, not NaN"
        raise InvalidArgumentError(
            f"{name} of {env_id!r} has the value {array[bad].flat[0].item()!r}; it must be {rule}. Give {rule} values."
        )


def _python_number_fits(value: Any, want: np.dtype) -> bool:
    """A Python float with an integral value (``500.0``) is taken for an int leaf, as ``make``'s kwargs are."""
    return isinstance(value, float) and value.is_integer() and jnp.issubdtype(want, jnp.integer)


__all__ = ["Bounds", "as_arrays", "checked_params", "checked_where", "leaf_name", "per_env"]
