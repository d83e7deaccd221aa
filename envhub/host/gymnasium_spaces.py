"""gymnasium spaces and envhub spaces, both ways: the one conversion the host backends and the gymnasium export share.

gymnasium is imported inside the functions, never by ``import envhub``. Dtypes follow JAX: 64-bit
gymnasium dtypes become JAX's default 32-bit ones (unless ``jax_enable_x64``). ``MultiBinary``
becomes an int8 ``Box`` in [0, 1], which converts back to ``MultiBinary``; ``Dict`` and ``Tuple``
become ``Tree`` spaces of dicts and tuples.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub import spaces
from envhub.errors import EnvUnavailableError


def from_gymnasium_space(space: Any, env_id: str = "gymnasium") -> spaces.Space:
    """The envhub space equal to a gymnasium space; ``env_id`` names the env in the error for other spaces."""
    from gymnasium import spaces as gym

    dtype = jax.dtypes.canonicalize_dtype(space.dtype) if space.dtype is not None else None
    if isinstance(space, gym.Discrete):
        return spaces.Discrete(int(space.n), int(space.start), dtype=dtype)
    if isinstance(space, gym.MultiDiscrete):
        return spaces.MultiDiscrete(space.nvec, space.start, dtype=dtype)
    if isinstance(space, gym.MultiBinary):
        return spaces.Box(0, 1, space.shape, dtype=np.int8)
    if isinstance(space, gym.Box):
        return spaces.Box(space.low, space.high, space.shape, dtype=dtype)
    if isinstance(space, gym.Dict):
        return spaces.Tree({k: from_gymnasium_space(s, env_id) for k, s in space.spaces.items()})
    if isinstance(space, gym.Tuple):
        return spaces.Tree(tuple(from_gymnasium_space(s, env_id) for s in space.spaces))
    raise EnvUnavailableError(
        env_id,
        f"its space {space!r} ({type(space).__name__}) has no fixed-shape envhub equivalent "
        f"(envhub maps Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple)",
    )


def to_gymnasium_space(space: spaces.Space) -> Any:
    """The gymnasium space equal to an envhub space, through the exports' one walk (``envhub.spaces.convert``): a
    ``Discrete`` of any integer dtype is a ``Discrete`` (its ``start`` kept), Tree dicts become ``Dict``, tuples ``Tuple``.

    Raises:
        TypeError: a leaf space that is no ``Box``, ``Discrete`` or ``MultiDiscrete``.
    """
    import gymnasium

    def node(children: Any) -> Any:
        return gymnasium.spaces.Dict(children) if isinstance(children, dict) else gymnasium.spaces.Tuple(children)

    return spaces.convert(space, _gymnasium_leaf, node)


def _gymnasium_leaf(space: spaces.Space) -> Any:
    import gymnasium

    if isinstance(space, spaces.Box):
        if space.dtype == np.int8 and np.all(space.low == 0) and np.all(space.high == 1):
            return gymnasium.spaces.MultiBinary(space.shape[0] if len(space.shape) == 1 else list(space.shape))
        low, high = space.low.astype(space.dtype), space.high.astype(space.dtype)
        return gymnasium.spaces.Box(low, high, space.shape, space.dtype)
    if isinstance(space, spaces.Discrete) and space.shape == ():
        return gymnasium.spaces.Discrete(space.n, start=space.start_value)
    if isinstance(space, spaces.MultiDiscrete):
        return gymnasium.spaces.MultiDiscrete(space.nvec, dtype=space.dtype, start=space.start)
    raise TypeError(f"No gymnasium space for {space!r}.")


def to_gymnasium_action(space: Any, action: Any) -> Any:
    """An envhub action in the structure and dtype a gymnasium ``space`` (or its vector env) takes."""
    from gymnasium import spaces as gym

    if isinstance(space, gym.Dict):
        return {k: to_gymnasium_action(s, action[k]) for k, s in space.spaces.items()}
    if isinstance(space, gym.Tuple):
        return tuple(to_gymnasium_action(s, a) for s, a in zip(space.spaces, action))
    return np.asarray(action, dtype=space.dtype)


__all__ = ["from_gymnasium_space", "to_gymnasium_action", "to_gymnasium_space"]
