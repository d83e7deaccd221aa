"""``Wire``: the host path's envpool ``send`` and ``recv``, in ``Layout.row``'s form.

envpool's own ``send``/``recv`` rebuild a dict of every action and state key, copy the action, and convert the
state to a gymnasium tuple on every call: ~10 us of Python a step, several times that on a busy 2-core machine,
where the Sebulba factory steps envpool from Python. Where the mapping is plain (one player per env, one
observation array: every single-player task), ``Wire`` calls the pool's ``_send``/``_recv`` on lists in the
spec's key order, the positions read once from the spec; anywhere else (or an envpool whose private names moved)
it calls envpool's public ``send``/``recv``. Both give the same rows (``tests``: ``test_the_wire_...``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from envhub_envpool.layout import Layout

_ACTION_IDS = ("env_id", "players.env_id")


class Wire:
    """``send(action, ids)`` and ``recv() -> Layout.row`` of one envpool pool (see the module)."""

    def __init__(self, pool: Any, layout: Layout):
        self.pool, self.layout = pool, layout
        self.plain = _state_positions(pool, layout) if _plain_actions(pool) else None  # None: envpool's own calls

    def send(self, action: Any, ids: np.ndarray) -> None:
        """Send ``action`` (one row per id) to envpool envs ``ids``."""
        if self.plain is None:
            self.pool.send(np.asarray(action, self.layout.action_dtype), ids)
            return
        ids = _writeable(ids, np.dtype(np.int32))
        self.pool._send([ids, ids, _writeable(action, self.layout.action_dtype)])

    def recv(self) -> tuple[Any, Any, Any, Any, Any, dict[str, Any]]:
        """One batch: ``(env ids, obs, reward, terminated, truncated, kept info)``, as ``Layout.row``."""
        if self.plain is None:
            return self.layout.row(self.pool.recv())
        state = self.pool._recv()
        eid, obs, reward, done, trunc, info = self.plain
        truncated = state[trunc]
        terminated = state[done] & ~truncated  # envpool's gymnasium rule
        return state[eid], state[obs], state[reward], terminated, truncated, {k: state[i] for k, i in info}


def _writeable(x: Any, dtype: np.dtype) -> np.ndarray:
    """``x`` as a C-ordered array of ``dtype`` that envpool's ``_send`` takes (it refuses read-only arrays)."""
    a = np.ascontiguousarray(x, dtype)
    return a if a.flags.writeable else a.copy()


def _plain_actions(pool: Any) -> bool:
    """One player per env and the action keys ``env_id``, ``players.env_id`` and one action array, in that order."""
    keys = tuple(getattr(getattr(pool, "_spec", None), "_action_keys", ()))
    players = getattr(pool, "config", {}).get("max_num_players", 1)
    return len(keys) == 3 and keys[:2] == _ACTION_IDS and players == 1 and hasattr(pool, "_send")


def _state_positions(pool: Any, layout: Layout) -> tuple[int, int, int, int, int, tuple[tuple[str, int], ...]] | None:
    """Where ``_recv``'s list holds each part of a row (``None`` if a part is missing or the obs is a dict)."""
    keys = list(getattr(pool, "_state_keys", ()))
    if not hasattr(pool, "_recv") or [k for k in keys if k.split(":")[0] == "obs"] != ["obs"]:
        return None
    wanted = ["info:env_id", "obs", "reward", "done", "trunc"]
    info = {k: k if k == "elapsed_step" else f"info:{k}" for k in layout.info_spec}
    if any(k not in keys for k in [*wanted, *info.values()]):
        return None
    eid, obs, reward, done, trunc = (keys.index(k) for k in wanted)
    return eid, obs, reward, done, trunc, tuple((k, keys.index(v)) for k, v in info.items())


__all__ = ["Wire"]
