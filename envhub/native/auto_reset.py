"""How a batched ``JaxEnvironment`` restarts the envs whose episode ended, on the step it ends.

Three schemes (``envhub.native.resets`` holds the machinery), chosen once per env at ``make``:

- spares (``reset_spares=True``, the default on a CPU): finished envs take spare initial states made
  ``num_envs`` at a time; a refill costs one batched reset per ``num_envs`` episode ends.
- on the step, skipped when none ended (``reset_spares=False`` on a CPU): one batched reset behind a branch.
- on the step, every env (``reset_spares=False`` on a GPU or TPU): a reset of every env on every step, the
  finished ones' kept. A branch there costs a device-to-host round trip per step, and a spare's
  bookkeeping a dozen small kernels, each more than a cheap reset; gymnax computes its resets this way too.
  A backend whose reset costs about a step (``cheap_reset = True``, gymnax's) uses it by default there.

Per-env params: a spare is made with its own env's next params when the backend's reset reads them
(``resets.reads_params``); otherwise one pool serves every env.
"""

from __future__ import annotations

from typing import Any

import jax

from envhub.core.params import as_arrays
from envhub.core.tree import select
from envhub.native import resets


def on_accelerator() -> bool:
    """Whether programs compile for a GPU or TPU (``jax.default_backend()``), where branches cost a round trip."""
    return jax.default_backend() != "cpu"


def uses_spares(batched: bool, reset_mode: str, restarts_plainly: bool, asked: bool | None, cheap: bool) -> bool:
    """``reset_spares``' value: ``asked``, or (``None``) the default above; never for what spares cannot serve."""
    if not (batched and reset_mode == "real" and restarts_plainly) or asked is False:
        return False
    return asked is True or not (cheap and on_accelerator())


class AutoReset:
    """The same-step auto-reset of ``JaxEnvironment`` (a mixin: it uses the env's ``_one``, ``_map`` and settings)."""

    reset_mode: str
    reset_spares: bool
    reset_chunk: int | None

    def _spares_follow_params(self) -> bool:
        """Whether each env's spare must be made with its own next params: the backend's reset reads its params.

        gymnax's resets do not (a CartPole start ignores the pole's mass): then one pool of spares serves every
        env whatever its params, refilled once per ``num_envs`` episode ends, as for an env without params.
        """
        if "_reset_reads_params" not in self.__dict__:
            default = self.default_params  # type: ignore[attr-defined]
            reset_one = self._reset_one  # type: ignore[attr-defined]
            reads = default is not None and resets.reads_params(reset_one, jax.random.key(0), as_arrays(default))
            self.__dict__["_reset_reads_params"] = reads
        return bool(self.__dict__["_reset_reads_params"])

    def _stale(self, spares: Any, where: jax.Array | None) -> Any:
        """``spares`` without the rows in ``where`` (all: ``None``) when they were made with the rows' old params."""
        return spares if spares is None or not self._spares_follow_params() else resets.stale_spares(spares, where)

    def _fresh(self, key: jax.Array, params: Any) -> Any:
        return strong(self._one("_reset_one")(key, params))  # type: ignore[attr-defined]

    def _auto_reset(self, key: jax.Array, done: jax.Array, reached: Any, state: Any) -> tuple[Any, Any]:
        """``(env, obs)`` after the same-step reset of the environments that are done, and the spares left."""
        if self.reset_mode == "cached":
            return select(done, state.first, reached), state.spares
        nxt, chunk = state.next_params, self.reset_chunk
        if self.reset_spares and self._spares_follow_params():  # each env's spare made with its own next params
            return resets.reset_from_own_spares(self._fresh, key, done, reached, state.spares, nxt, chunk)
        if self.reset_spares:  # any spare suits any env (a reset that ignores params: any env's will do)
            fresh = lambda k: self._fresh(k, None if nxt is None else jax.tree.map(lambda x: x[0], nxt))  # noqa: E731
            return resets.reset_from_spares(fresh, key, done, reached, state.spares, chunk)

        def restart(k: jax.Array, reached_and_params: Any) -> Any:
            (env, _), params = reached_and_params
            return strong(self._one("_restart_one")(k, env, params)), params  # type: ignore[attr-defined]

        branch = not on_accelerator()
        reset = lambda k, d, r, p: resets.reset_if_done(restart, k, d, (r, p), chunk, branch)[0]  # noqa: E731
        return self._map(reset, key, done, reached, nxt), None  # type: ignore[attr-defined]


def strong(tree: Any) -> Any:
    """Cast weak-typed leaves (Python scalars from the backend) to strong types: one trace for every step."""
    return jax.tree.map(lambda x: jax.numpy.asarray(x).astype(jax.numpy.asarray(x).dtype), tree)


__all__ = ["AutoReset", "on_accelerator", "strong", "uses_spares"]
