"""ALE's XLA FFI calls (registered by ``AtariVectorEnv.xla()``) as envhub uses them: pure XLA, no Python per step.

- ``step``: ALE's ``atari_vector_xla_step`` of every env (its next-step reset never fires: every env that
  ends is reset in the same step, below).
- ``reset``: ALE's ``atari_vector_xla_reset`` of the envs an index array names. Its index array has a static
  length, so ``reset_where`` resets the masked envs (ended ones first) in power-of-two chunks, one chunk per
  set bit of their count, each under ``lax.cond``: only the chunks a step needs run.
- ``not_exported``: the handle as it is, but ``jax.export`` of a program holding it raises envhub's error.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

from envhub.plugin import InvalidArgumentError, key_to_seeds


class Out(NamedTuple):
    """What ALE returns for every env, after a step or a reset (reward and flags zero after a reset)."""

    obs: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    lives: jax.Array
    episode_frame_number: jax.Array


class Calls:
    """The two FFI calls for ``n`` envs whose observation (all envs) has shape ``obs_shape``."""

    def __init__(self, n: int, obs_shape: tuple[int, ...]):
        self.n = n
        handle = jax.ShapeDtypeStruct((8,), jnp.uint8)
        obs = jax.ShapeDtypeStruct(obs_shape, jnp.uint8)
        ints, bools = jax.ShapeDtypeStruct((n,), jnp.int32), jax.ShapeDtypeStruct((n,), jnp.bool_)
        self._step = jax.ffi.ffi_call(
            "atari_vector_xla_step", (handle, obs, ints, bools, bools, ints, ints, ints, ints), has_side_effect=True
        )
        self._reset = jax.ffi.ffi_call(
            "atari_vector_xla_reset", (handle, obs, ints, ints, ints, ints), has_side_effect=True
        )
        self.chunks = [1 << b for b in reversed(range(n.bit_length()))]  # n = 16: 16, 8, 4, 2, 1

    def step(self, handle: jax.Array, action: jax.Array) -> tuple[jax.Array, Out]:
        handle, obs, reward, terminated, truncated, _, lives, _, episode_frames = self._step(
            handle, action, jnp.ones((self.n,), jnp.float32)
        )
        return handle, Out(obs, reward, terminated, truncated, lives, episode_frames)

    def reset(self, handle: jax.Array, ids: jax.Array, seeds: jax.Array) -> tuple[jax.Array, Out]:
        """Reset envs ``ids`` (seed -1: continue each env's own random stream); every env's obs comes back."""
        handle, obs, _, lives, _, episode_frames = self._reset(handle, ids, seeds)
        zeros = jnp.zeros((self.n,), jnp.bool_)
        return handle, Out(obs, jnp.zeros((self.n,), jnp.int32), zeros, zeros, lives, episode_frames)

    def read(self, handle: jax.Array) -> tuple[jax.Array, Out]:
        """Every env's current obs, lives and frame count: ALE's reset of no env."""
        return self.reset(handle, jnp.zeros((0,), jnp.int32), jnp.zeros((0,), jnp.int32))

    def reset_where(self, handle: jax.Array, out: Out, where: jax.Array, seeds: jax.Array) -> tuple[jax.Array, Out]:
        """Reset the envs ``where`` is true for (``seeds``: one per env); ``out`` is what comes back if none is."""
        order = jnp.argsort(~where, stable=True).astype(jnp.int32)  # the envs to reset first
        seeds = seeds[order]
        count = where.sum(dtype=jnp.int32)

        def chunk(size: int) -> Any:
            def run(carry: tuple[jax.Array, Out, jax.Array]) -> tuple[jax.Array, Out, jax.Array]:
                handle, _, offset = carry
                ids = jax.lax.dynamic_slice(order, (offset,), (size,))
                handle, new = self.reset(handle, ids, jax.lax.dynamic_slice(seeds, (offset,), (size,)))
                return handle, new, offset + size

            return run

        carry = (handle, out, jnp.int32(0))
        for size in self.chunks:
            carry = jax.lax.cond((count & size) > 0, chunk(size), lambda c: c, carry)
        return carry[0], carry[1]


def refused(like: jax.ShapeDtypeStruct) -> jax.Array:
    """What a refused call returns in place of ALE's output: zero frames and flags, lives -2 (read as NaN rewards)."""
    return jnp.full(like.shape, -2 if like.dtype == jnp.int32 else 0, like.dtype)


def seeds_for(key: jax.Array, n: int) -> jax.Array:
    """ALE's seeds for ``n`` emulators from a key (non-negative int32; ALE reads -1 as "no new seed")."""
    return (key_to_seeds(key, n) >> 1).astype(jnp.int32)


NOT_EXPORTABLE = (
    "jax.export of a program that runs {id!r}: ALE programs cannot be exported. Their XLA calls name this "
    "process's emulators (a handle to ALE's C++ vector env) and the environment's JAX Refs, which no other process "
    "has. Run the program with jax.jit in the process that made the env (JAX's persistent compilation cache keeps "
    "its compile between processes), or export a JAX-native backend's program (docs/export.md)."
)

# jax.export of an ALE program otherwise fails inside JAX ("Too many leaves for PyTreeDef", from the Refs), and
# export traces exactly as jit does: only the lowering knows it is for export. An identity on the handle (it lowers
# to nothing, so jit's program and its cache key are unchanged) whose lowering refuses export with envhub's words.
_not_exported = Primitive("envhub_ale_not_exported")
_not_exported.def_impl(lambda handle, *, env_id: handle)
_not_exported.def_abstract_eval(lambda handle, *, env_id: handle)


def _lower_not_exported(ctx: Any, handle: Any, *, env_id: str) -> list[Any]:
    if getattr(getattr(ctx.module_context, "lowering_parameters", None), "for_export", False):  # jax 0.10's field
        raise InvalidArgumentError(NOT_EXPORTABLE.format(id=env_id))
    return [handle]


mlir.register_lowering(_not_exported, _lower_not_exported)


def not_exported(handle: jax.Array, env_id: str) -> jax.Array:
    """``handle`` unchanged; lowering it for ``jax.export`` raises ``InvalidArgumentError`` (``NOT_EXPORTABLE``)."""
    return _not_exported.bind(handle, env_id=env_id)
