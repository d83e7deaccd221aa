"""``Guards``: how an ALE environment refuses a stale state or an invalid action, eagerly and inside ``jit``.

Mixed into ``AleEnvironment``. Eagerly, envhub's errors; inside ``jit`` no emulator runs, the rewards are NaN
and the state returned cannot step (``_guarded``), ``envhub.checked`` raises them, and with
``validate_actions="strict"`` an invalid action is a hard stop (``_strict_stop``). The newest state stays
current either way.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from envhub.plugin import ActionError, HostEnvError, StaleStateError, any_invalid, host_value_checker
from envhub_ale import xla


class Guards:
    """The refusals of ``AleEnvironment`` (its Refs ``_newest`` and ``_handle``, its ``_own_handle``)."""

    id: str
    action_space: Any
    _single_action: Any
    _newest: Any
    _handle: Any
    _own_handle: Any

    def _check_eagerly(self, state: Any, op: str, valid: Any = True, action: Any = None) -> None:
        """Raise envhub's error for what the compiled guard would refuse (``_guarded``); change nothing."""
        newest = int(self._revived()[...])
        given = int(np.ravel(np.asarray(state.version))[0])
        if newest < 0 or given < 0:
            raise HostEnvError(self.id, op, RuntimeError(_NO_STATE if given >= 0 else _REFUSED_STATE))
        if given != newest or not bool(jnp.all(state.handle == self._handle[...])):
            raise StaleStateError(self.id, given, newest)
        if not bool(valid):
            refuse_actions_outside(self, np.asarray(action))

    def _guarded(self, state: Any, op: str, valid: jax.Array, action: Any, run: Any) -> tuple[Any, Any, Any]:
        """Inside a trace: ``run(handle)`` once ``state`` is the newest and ``valid`` holds, and the new version.

        A refused call runs no emulator and returns ``_refused`` outputs (NaN rewards, zero frames) and a state
        that cannot step (version -1); the newest state stays current, and ``envhub.checked`` reports it
        (checkify). XLA has no other way to stop: an FFI call that fails poisons JAX's effect tokens, and every
        later ALE call of the process with them (measured)."""
        newest_ref, own = self._revived(), xla.not_exported(self._handle[...], self.id)
        newest = newest_ref[...]
        current = (state.version == newest) & (newest >= 0) & jnp.all(state.handle == own)
        checkify.debug_check(current, f"{StaleStateError.__name__}: {_STALE_IN_JIT.format(id=self.id)}")
        ok = current & valid
        handle, out = jax.lax.cond(ok, run, lambda h: (h, jax.tree.map(xla.refused, jax.eval_shape(run, h)[1])), own)
        version = jnp.where(ok, (newest + 1) & 0x7FFFFFFF, -1)
        newest_ref[...] = jnp.where(ok, version, newest)
        return handle, out, version

    def _strict_stop(self, action: Any) -> Any:
        """``validate_actions="strict"`` inside a trace: ``action``, through a ``lax.cond`` that calls the host
        only when a value is invalid; the callback raises ``ActionError`` (JAX re-raises it in a
        ``JaxRuntimeError``), as the core's strict stop does for JAX-native envs (no emulator has run in this step).

        A program that fails has consumed the Refs jit passed it (their buffers are donated, and only a run that
        completes writes them back), so the callback first gives them back their values as this step read them:
        the state passed to the refused step is still the newest and steps again."""
        check = host_value_checker(self.id, self.action_space)

        def raise_on_host(host_action: Any, newest: Any) -> Any:
            try:
                check(np.asarray(host_action))
            finally:
                self._restore_refs(np.int32(newest))
            return np.asarray(host_action)  # not reached: the values were invalid

        def stop(a: jax.Array, newest: jax.Array) -> jax.Array:
            return jax.pure_callback(raise_on_host, jax.ShapeDtypeStruct(a.shape, a.dtype), a, newest)

        action = jnp.asarray(action)
        return jax.lax.cond(any_invalid(self.action_space, action), stop, lambda a, _: a, action, self._newest[...])

    def _revived(self) -> Any:
        """The newest-version Ref, restored first where a compiled call that failed (elsewhere in the caller's
        program) consumed it: then no state is current (the newest went with the call) and ``init`` starts afresh."""
        self._restore_refs(np.int32(-fresh_base()), only_deleted=True)
        return self._newest

    def _restore_refs(self, newest: np.int32, only_deleted: bool = False) -> None:
        """Give the Refs new buffers (the newest version ``newest``, the emulators' handle), as jit's own writes do;
        ``only_deleted``: only those whose buffer was deleted."""
        for ref, value in ((self._newest, newest), (self._handle, self._own_handle)):
            if only_deleted:
                try:
                    ref[...]
                    continue
                except RuntimeError:  # "Array has been deleted"
                    pass
            ref._refs._buf._replace_with(jax.device_put(value, ref.sharding))  # a jax internal


_STALE_IN_JIT = (
    "{id!r} was given, inside jit, a state that is not its newest (stepped already, made by another environment, "
    "or its environment was closed); nothing was stepped. Pass the state returned by the previous init/reset/step."
)
_NO_STATE = "no state of it is current (closed, or a refusal inside jit lost the newest one): init again"
_REFUSED_STATE = (
    "this state came from a call refused inside jit (a stale state or an invalid action: its rewards were NaN); "
    "step the state given to that call, or init again"
)


def refuse_actions_outside(env: Any, action: np.ndarray) -> None:
    """``ActionError`` where an action of ``action`` (NumPy) is outside ``env``'s action set: ALE would hang on it."""
    n = env._single_action.n
    if action.size and (action.min() < 0 or action.max() >= n):
        problem = f"{action.ravel().tolist()} has values outside [0, {n})"
        raise ActionError(env.id, problem, env.action_space)


def fresh_base() -> int:
    """A version no state of this process is likely to hold (2**24..2**30): where counting restarts."""
    return int(np.random.default_rng().integers(2**24, 2**30))


__all__ = ["Guards", "fresh_base", "refuse_actions_outside"]
