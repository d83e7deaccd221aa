"""How envpool's rows and specs map onto envhub's: spaces, info keys, and the ``(n, 2)`` state layout.

A pool of ``n`` logical environments holds ``2n`` envpool environments (see ``spares``). The state
stores per-envpool-env arrays as ``(n, 2, ...)`` (``(2, ...)`` when unbatched) so that every leaf
leads with ``num_envs``, as envhub's sharding and wrappers expect; the scheme works on the
physical order ``(2n, ...)``.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.plugin import from_gymnasium_space, spaces

_DROPPED_INFO = ("env_id", "players")  # physical ids: meaningless to the user


@dataclasses.dataclass(frozen=True)
class Layout:
    """The shapes one ``EnvpoolEnvironment`` works with (``n`` logical envs; ``batched`` unless num_envs=None)."""

    env_id: str
    n: int
    batched: bool
    observation_space: spaces.Space
    action_space: spaces.Space
    action_dtype: np.dtype  # what envpool's send takes
    info_spec: dict[str, jax.ShapeDtypeStruct]

    @classmethod
    def of(cls, env_id: str, spec: Any, num_envs: int | None) -> Layout:
        with warnings.catch_warnings():  # envpool builds float64-bounded float32 Boxes, and gymnasium says so
            warnings.filterwarnings("ignore", message=".*precision lowered by casting", category=UserWarning)
            observation_space, action_space = spec.gymnasium_observation_space, spec.gymnasium_action_space
        return cls(
            env_id=env_id,
            n=1 if num_envs is None else num_envs,
            batched=num_envs is not None,
            observation_space=from_gymnasium_space(observation_space, env_id),
            action_space=from_gymnasium_space(action_space, env_id),
            action_dtype=np.dtype(spec._action_spec[-1][0]),
            info_spec=info_spec_of(spec),
        )

    @property
    def env_shape(self) -> tuple[int, ...]:
        return (self.n,) if self.batched else ()

    def row(self, out: Any) -> tuple[Any, Any, Any, Any, Any, dict[str, Any]]:
        """One envpool ``recv``: ``(env ids, obs, reward, terminated, truncated, kept info)``."""
        obs, reward, terminated, truncated, info = out
        return info["env_id"], obs, reward, terminated, truncated, {k: info[k] for k in self.info_spec}

    def lay(self, x: Any) -> Any:
        """Physical order ``(2n, ...)`` to the state layout ``(n, 2, ...)`` (``(2, ...)`` unbatched): envpool
        envs ``2i`` and ``2i + 1`` are row ``i``. A reshape, free in XLA (a transpose here was 6 copies a step)."""
        y = x.reshape((self.n, 2, *x.shape[1:]))
        return y if self.batched else y[0]

    def unlay(self, y: Any) -> Any:
        return y.reshape((2 * self.n, *y.shape[(2 if self.batched else 1) :]))

    def squeeze(self, x: Any) -> Any:
        return x if self.batched else x[0]

    def obs_tree(self, obs: Any, xp: Any = jnp) -> Any:
        """Logical-order obs (leading n) as JAX arrays of the declared dtypes, squeezed if unbatched."""
        return map_space(self.observation_space, lambda s, x: xp.asarray(self.squeeze(x), s.dtype), obs)

    def info_tree(self, info: dict[str, Any], xp: Any = jnp) -> dict[str, Any]:
        return {k: xp.asarray(self.squeeze(info[k]), v.dtype) for k, v in self.info_spec.items()}


def map_space(space: spaces.Space, fn: Any, tree: Any) -> Any:
    """``fn(leaf space, leaf)`` over a space's leaves and a matching tree (``None``: no tree)."""
    if isinstance(space, spaces.Tree):
        leaves = [None] * len(space.leaves) if tree is None else space.treedef.flatten_up_to(tree)
        return space.treedef.unflatten([fn(s, x) for s, x in zip(space.leaves, leaves)])
    return fn(space, tree)


def info_spec_of(spec: Any) -> dict[str, jax.ShapeDtypeStruct]:
    """The per-env info keys envpool reports (``elapsed_step`` and its ``info:*`` keys, ids dropped)."""
    out = {}
    for key, (dtype, shape, *_) in zip(spec._state_keys, spec._state_spec):
        if key == "elapsed_step" or key.startswith("info:"):
            name = key.removeprefix("info:")
            if name.split(".")[0] in _DROPPED_INFO:
                continue
            dims = tuple(int(d) for d in shape if d != -1)
            out[name] = jax.ShapeDtypeStruct(dims, jax.dtypes.canonicalize_dtype(np.dtype(dtype)))
    return dict(sorted(out.items()))


def has_64bit(spec: Any) -> bool:
    """Whether the task has 64-bit observations, info or actions (the XLA path needs jax_enable_x64 for those)."""
    specs = list(spec._state_spec) + list(spec._action_spec)
    return any(np.dtype(d).itemsize == 8 and np.dtype(d).kind in "fiu" for d, *_ in specs)
