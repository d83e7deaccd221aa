"""How envs restart: the one home of envhub's same-step auto-reset (``ResetStrategy``).

An env whose episode ends is restarted on the step it ends (``ts.final_obs`` the observation reached, ``ts.obs``
the new episode's first). How is one of four schemes, chosen once per env from its make settings
(``ResetStrategy.choose``); ``envhub.native.resets`` holds the functions they are built from:

- ``"cached"`` (``reset_mode="cached"``): every episode restarts from the env's first state: a ``select``.
- ``"spares"`` (``reset_spares=True``, the default of a batch with real resets, on a GPU or TPU too unless
  the backend's reset is cheap, see ``"every_step"``; never where ``_restart_one`` reads the old state):
  finished envs take spare initial states made ``num_envs`` at a time, so a batch pays one batched reset per
  ``num_envs`` episode ends. One pool serves every env (``resets.reset_from_spares``), unless the backend's
  reset reads its per-env params (``resets.reads_params``): then each env's spare is made with its own next
  params (``resets.reset_from_own_spares``, ``own=True``).
- ``"on_step"`` (``reset_spares=False`` on a CPU, and every unbatched env there): the finished envs reset on
  that step, in one batched reset behind a branch that skips it when none finished (``resets.reset_if_done``).
- ``"every_step"`` (the same on a GPU or TPU): every env computes a reset on every step and the finished ones
  keep theirs, with no branch: there a branch costs a device-to-host round trip and a spare's bookkeeping a
  dozen small kernels, each more than a cheap reset (gymnax computes its resets this way too). A backend whose
  reset costs about a step (``cheap_reset = True``, gymnax's) defaults to it there instead of spares.

One more scheme is never a make setting: ``"caller"``, an env copy made by ``leaving_restarts`` for an export whose
library restarts episodes itself (Stoa's and jumanji's auto-reset wrappers call ``reset`` on a LAST step): its step
and ``TimeLimit``'s leave an ended episode as it ended (``ts.obs`` the observation reached, the state the ended one),
so an episode end costs one reset, the library's, not two.

Who restarts envs asks the strategy: ``JaxEnvironment`` (``env.reset_strategy``, its step) and ``TimeLimit``
(``restart_where``: a masked reset behind the same branch rule). A restart asked from outside is the env's own
``reset(where=)`` (every env's reset, kept where asked: a select), called by the exports whose library asks for
resets (gymnasium's vector export, TorchRL's: ``interop.compiled.Runner.reset_where``; ``still_to_restart``
drops the envs the last step restarted already). To change how envs restart, change this module (host
backends restart inside their own library: envpool, ALE, gymnasium's vector envs).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

import jax
import jax.numpy as jnp

from envhub.core.tree import select
from envhub.native import resets

T = TypeVar("T")

#: The schemes, in the order of the module docstring.
SCHEMES = ("cached", "spares", "on_step", "every_step", "caller")


def on_accelerator() -> bool:
    """Whether programs compile for a GPU or TPU (``jax.default_backend()``), where branches cost a round trip."""
    return jax.default_backend() != "cpu"


def uses_spares(batched: bool, reset_mode: str, restarts_plainly: bool, asked: bool | None, cheap: bool) -> bool:
    """``reset_spares``' value: ``asked``, or (``None``) spares unless ``cheap`` on an accelerator; never for what
    spares cannot serve (one env, cached resets, a backend whose ``_restart_one`` reads the old state)."""
    if not (batched and reset_mode == "real" and restarts_plainly) or asked is False:
        return False
    return asked is True or not (cheap and on_accelerator())


@dataclasses.dataclass(frozen=True)
class ResetStrategy:
    """How a ``JaxEnvironment`` (or anything wrapping one) restarts finished envs: one of ``SCHEMES``.

    Attributes:
        scheme: One of ``SCHEMES`` (see the module docstring).
        num_envs: The batch (``None``: one env).
        chunk: Batched resets vmap at most this many envs at a time (``resets.vmap_in_chunks``).
        own: ``"spares"`` only: each env's spare is made with its own next params.
    """

    scheme: str
    num_envs: int | None = None
    chunk: int | None = None
    own: bool = False

    @classmethod
    def choose(cls, num_envs: int | None, reset_mode: str, spares: bool, chunk: int | None, own: bool) -> ResetStrategy:
        """The scheme of an env with these settings (``spares``: its ``reset_spares``; ``own``: its reset reads params)."""
        if reset_mode == "cached":
            return cls("cached", num_envs, chunk)
        if spares:
            return cls("spares", num_envs, chunk, own)
        return cls("every_step" if on_accelerator() else "on_step", num_envs, chunk)

    @classmethod
    def of(cls, env: Any) -> ResetStrategy:
        """``env``'s strategy (a wrapper's: its inner env's); a host env's reset runs on the host, only when asked:
        ``"on_step"``."""
        strategy = getattr(env, "reset_strategy", None)  # JaxEnvironment's; wrappers hand it through
        return strategy if isinstance(strategy, ResetStrategy) else cls("on_step", env.num_envs)

    @property
    def branches(self) -> bool:
        """Whether restarts wait behind a branch that skips them when no env finished (all but ``"every_step"``)."""
        return self.scheme != "every_step"

    def when_any(self, where: jax.Array, restart: Callable[[], T], keep: Callable[[], T]) -> T:
        """``restart()`` if any of ``where``, else ``keep()``; without a branch (``restart()`` always) where branches
        cost more than a restart. ``restart`` must leave the envs outside ``where`` as ``keep`` would."""
        if not self.branches:
            return restart()
        return jax.lax.cond(jnp.any(where), restart, keep)

    def first_spares(self, states: Any) -> resets.Spares[Any] | None:
        """The spares a new state holds (``states``: the batch's initial ``(env, obs)``): none usable yet."""
        return resets.no_spares(states, own=self.own) if self.scheme == "spares" else None

    def stale(self, spares: Any, where: jax.Array | None) -> Any:
        """``spares`` after the next params of the envs in ``where`` (all: ``None``) changed: made with the old ones,
        their rows are unusable where each env's spare follows its params."""
        return resets.stale_spares(spares, where) if self.own and spares is not None else spares

    def after_step(
        self,
        key: jax.Array,
        done: jax.Array,
        reached: Any,
        state: Any,
        fresh: Callable[[jax.Array, Any], Any],
        restart: Callable[[jax.Array, Any, Any], Any],
    ) -> tuple[Any, Any]:
        """``(reached, spares)`` after restarting the envs in ``done``, on this step.

        Args:
            key: The step's reset key.
            done: Which envs' episode ended (``()`` or ``(num_envs,)`` bool).
            reached: ``(env, obs)`` the step reached, leaves leading with ``num_envs``.
            state: The ``JaxState`` before the step (its ``first``, ``spares`` and ``next_params``).
            fresh: One env's reset, ``(key, params) -> (env, obs)`` (``params`` ``None`` for an env without).
            restart: One env's restart, ``(key, reached, params) -> (env, obs)`` (``_restart_one``).
        """
        if self.scheme == "caller":
            return reached, state.spares
        if self.scheme == "cached":
            return select(done, state.first, reached), state.spares
        params = state.next_params
        if self.scheme == "spares" and self.own:
            return resets.reset_from_own_spares(fresh, key, done, reached, state.spares, params, self.chunk)
        if self.scheme == "spares":  # any spare suits any env (a reset that ignores params: any env's will do)
            one = None if params is None else jax.tree.map(lambda x: x[0], params)
            return resets.reset_from_spares(lambda k: fresh(k, one), key, done, reached, state.spares, self.chunk)

        def again(k: jax.Array, reached_and_params: Any) -> Any:
            old, p = reached_and_params
            return restart(k, old, p), p

        def one_env(k: jax.Array, d: jax.Array, r: Any, p: Any) -> Any:
            return resets.reset_if_done(again, k, d, (r, p), self.chunk, self.branches)[0]

        if self.num_envs is None:
            return one_env(key, done, reached, params), None
        return jax.vmap(one_env)(jax.random.split(key, self.num_envs), done, reached, params), None


def restart_where(env: Any, key: jax.Array, state: Any, where: jax.Array, obs: Any) -> tuple[Any, Any]:
    """``env``'s envs in ``where`` restarted (``env.reset(key, state, where=where)``) and ``obs`` with their first
    observations, the others untouched; skipped when ``where`` is all false, by ``env``'s branch rule
    (``ResetStrategy.of(env).when_any``). For masked restarts inside a step, outside the env: ``TimeLimit``'s."""

    def restart() -> tuple[Any, Any]:
        new, first = env.reset(key, state, where=where)
        return new, select(where, first.obs, obs)

    strategy = ResetStrategy.of(env)
    if strategy.scheme == "caller":
        return state, obs
    return strategy.when_any(where, restart, lambda: (state, obs))


def leaving_restarts(env: Any) -> Any:
    """A copy of the JAX-native ``env`` (its wrappers copied around it) whose steps restart nothing (the ``"caller"``
    scheme): a LAST step's state is the one its episode ended in and ``ts.obs`` the observation reached. For exports
    whose library restarts ended episodes with ``reset`` itself; ``env`` is left as it is. An env not built on
    ``JaxEnvironment`` restarts as it does (``env`` itself comes back)."""
    if env.unwrapped is not env:  # a wrapper: the same wrapper around its inner env's copy
        inner = leaving_restarts(env.env)
        if inner is env.env:
            return env
        copied = copy.copy(env)
        copied.env = inner
        return copied
    if not hasattr(env, "copy_of"):  # not a JaxEnvironment: it restarts as it does
        return env
    copied = copy.copy(env)
    copied.copy_of = env  # JaxEnvironment.reset_strategy reads it (and forgets its caches); closed follows env's
    return copied


def still_to_restart(asked: Any, ended: Any) -> Any:
    """The envs of a host's reset mask ``asked`` that need a restart: not those the last step ``ended`` (envhub
    restarted them in that step; resetting them again would throw away an episode not yet stepped).
    NumPy arrays or torch tensors alike."""
    return asked & ~ended


def strong(tree: Any) -> Any:
    """Cast weak-typed leaves (Python scalars from the backend) to strong types: one trace for every step."""
    return jax.tree.map(lambda x: jnp.asarray(x).astype(jnp.asarray(x).dtype), tree)


__all__ = [
    "SCHEMES",
    "ResetStrategy",
    "leaving_restarts",
    "on_accelerator",
    "restart_where",
    "still_to_restart",
    "strong",
    "uses_spares",
]
