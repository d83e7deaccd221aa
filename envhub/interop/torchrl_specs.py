"""TorchRL specs of envhub spaces, for ``to_torchrl`` (``envhub.interop.torchrl_export``; imports torch and torchrl).

The one walk of a space's tree (``envhub.spaces.convert``) and ``envhub.interop.leaves``' leaf rule: a ``Discrete``
action (one integer, any integer dtype) is an int64 ``Categorical`` (``OneHot`` with ``one_hot``), a 1-d
``MultiDiscrete`` one ``MultiCategorical`` (``MultiOneHot``), counted from 0 (the export adds ``start`` back); an
observation's ``Discrete`` from 0 is a ``Categorical`` of its dtype, other integer spaces an integer ``Bounded``
with inclusive bounds; a float ``Box`` ``Bounded`` where its span is finite in its dtype, else ``Unbounded``; a
bool ``Box`` ``Binary``. A ``Tree`` is a ``Composite``, its leaves at the root by their keys (as TorchRL's own
wrappers do; a tuple's under ``"observation"``, an action's under ``"action"``).
"""

from __future__ import annotations

from typing import Any, TypeGuard

import jax
import numpy as np
import torch
import torchrl.data as rl

from envhub import spaces
from envhub.errors import InvalidArgumentError
from envhub.interop.leaves import discrete_n, inclusive_bounds

#: Keys an observation may not take at the root of a step's tensordict (TorchRL's own).
RESERVED = {"action", "reward", "done", "terminated", "truncated", "next", "_reset", "is_init"}
_NAMES = "bool float16 bfloat16 float32 float64 int8 int16 int32 int64 uint8 uint16 uint32".split()
DTYPES = {np.dtype(getattr(jax.numpy, n)): getattr(torch, n) for n in _NAMES}  # the dtypes both libraries have


def keyed_specs(space: spaces.Space, env_id: str, what: str, batch: Any, one_hot: bool) -> tuple[list[Any], list[Any]]:
    """The tensordict key and TorchRL spec of each leaf of ``space``, in JAX's leaf order (``what``:
    ``"observation"`` or ``"action"``).

    Raises:
        InvalidArgumentError: a leaf has no TorchRL spec; an observation key is one TorchRL keeps for itself.
    """
    named, action = f"the {what} space of {env_id!r}", what == "action"
    specs = spaces.convert(space, lambda s: to_torchrl_spec(s, batch, action, one_hot, named), lambda kids: kids)
    if not isinstance(space, spaces.Tree):
        return [what], [specs]
    paths, leaves = zip(*jax.tree_util.tree_flatten_with_path(specs)[0])
    keys = []
    for path in paths:
        names = tuple(_name(p) for p in path)
        key = names if not action and names and not names[0].isdigit() else (what, *names)
        if key[0] in RESERVED and not action:
            raise InvalidArgumentError(
                f"to_torchrl: the observation space of {env_id!r} has an entry {key[0]!r}, a key TorchRL keeps for "
                f"itself ({sorted(RESERVED)}); rename it (envhub.wrappers.TransformObservation)."
            )
        keys.append(key if len(key) > 1 else key[0])
    return keys, list(leaves)


def _name(entry: Any) -> str:
    """A path entry's key: a dict's key, a named tuple's field, a tuple's index."""
    return str(next((getattr(entry, a) for a in ("key", "name", "idx") if hasattr(entry, a)), entry))


def composite(keys: list[Any], specs: list[Any], batch: tuple[int, ...]) -> Any:
    """One ``Composite`` holding ``specs`` under ``keys`` (nested where a key is a tuple)."""
    out = rl.Composite(shape=batch)
    for key, spec in zip(keys, specs):
        if isinstance(key, tuple):
            for i in range(1, len(key)):
                if key[:i] not in out.keys(True):
                    out[key[:i]] = rl.Composite(shape=batch)
        out[key] = spec
    return out


def counted(space: spaces.Space) -> TypeGuard[spaces.MultiDiscrete]:
    """An integer action space TorchRL counts from 0 (``Categorical``, ``MultiCategorical``, one-hot): one
    ``Discrete``, or a 1-d ``MultiDiscrete`` (any start: the export shifts the values)."""
    return isinstance(space, spaces.MultiDiscrete) and len(space.shape) == int(not isinstance(space, spaces.Discrete))


def to_torchrl_spec(
    space: spaces.Space, batch: tuple[int, ...] = (), action: bool = False, one_hot: bool = False, what: str = "a space"
) -> rl.TensorSpec:
    """The TorchRL spec of a leaf ``space`` for envs of batch shape ``batch`` (see the module docstring).

    Raises:
        InvalidArgumentError: ``space`` (named with ``what``) has no TorchRL spec.
    """
    if isinstance(space, spaces.Tree) or space.dtype not in DTYPES:
        raise InvalidArgumentError(
            f"to_torchrl: {what}, {space!r}, has no TorchRL spec (TorchRL specs hold bool, int8-int64, uint8-uint32 "
            f"and float tensors); convert it first (envhub.wrappers.TransformObservation, or a wrapper of your own)."
        )
    dtype, shape = DTYPES[space.dtype], (*batch, *space.shape)
    if isinstance(space, spaces.MultiDiscrete):
        if action and counted(space):  # TorchRL's default int64 actions, counted from 0
            nvec, discrete = [int(n) for n in space.nvec.reshape(-1)], isinstance(space, spaces.Discrete)
            if one_hot:
                return rl.OneHot(nvec[0], (*batch, nvec[0])) if discrete else rl.MultiOneHot(nvec, (*batch, sum(nvec)))
            return rl.Categorical(nvec[0], shape) if discrete else rl.MultiCategorical(nvec, shape)
        n = discrete_n(space)
        if n is not None:
            return rl.Categorical(n, shape, dtype=dtype)
        low, high = (torch.as_tensor(b) for b in inclusive_bounds(space))
        return rl.Bounded(low.expand(shape), high.expand(shape), shape, dtype=dtype)
    assert isinstance(space, spaces.Box)
    if space.dtype == np.bool_:
        return rl.Binary(shape=shape, dtype=torch.bool) if space.shape else rl.Categorical(2, shape, dtype=torch.bool)
    low, high = inclusive_bounds(space)
    with np.errstate(over="ignore", invalid="ignore"):
        span = high - low  # inf where it overflows the dtype
    if not np.all(np.isfinite(span.astype(np.float64))):
        return rl.Unbounded(shape=shape, dtype=dtype)
    return rl.Bounded(torch.as_tensor(low).expand(shape), torch.as_tensor(high).expand(shape), shape, dtype=dtype)


__all__ = ["DTYPES", "RESERVED", "composite", "counted", "keyed_specs", "to_torchrl_spec"]
