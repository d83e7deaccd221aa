"""``JaxState``: the state of every ``JaxEnvironment``: the backend's own, the episode's step count, resets, params."""

from __future__ import annotations

import dataclasses
from typing import Any, Generic, TypeVar

import jax
import jax.numpy as jnp
import numpy as np

from envhub.core.tree import same_structure, select
from envhub.errors import InvalidArgumentError

S = TypeVar("S")


@dataclasses.dataclass(frozen=True)
class JaxState(Generic[S]):
    """The state of a ``JaxEnvironment`` (every leaf leads with ``num_envs`` when batched).

    Params are kept so that a step never writes them: an episode's params are ``next_params`` from its start
    until ``set_params`` changes that env's ``next_params``, and ``prior_params`` after. Unchanged params are
    then loop-invariant in a scan (no per-step copy or select of every leaf), which keeps params as data as
    cheap as compile-time constants (benchmarks/params_rollout.py).

    Attributes:
        env: The backend's own state.
        steps: int32 steps taken in the current episode.
        first: ``reset_mode="cached"`` only: ``(env, obs)`` every episode restarts from; else ``None``.
        spares: ``reset_spares`` only: spare initial ``(env, obs)`` pairs (``envhub.native.resets.Spares``); else ``None``.
        next_params: the params each env's next episode starts with (``set_params``); ``None`` for an env without
            params. ``default_params``' structure, leaves leading with ``num_envs`` when batched.
        prior_params: the params of the envs whose running episode started before their ``next_params`` were last
            set (``on_next`` false); ``None`` likewise.
        on_next: bool per env: its running episode uses ``next_params``; ``None`` likewise.
    """

    env: S
    steps: jax.Array
    first: Any = None
    spares: Any = None
    next_params: Any = None
    prior_params: Any = None
    on_next: Any = None

    @property
    def params(self) -> Any:
        """The params of each env's running episode (``None`` for an env without params)."""
        if self.next_params is None or isinstance(self.on_next, jax.ShapeDtypeStruct):
            return self.next_params  # None, or (a state from jax.eval_shape) the same shapes
        return select(self.on_next, self.next_params, self.prior_params)

    def with_next_params(self, new: Any, where: jax.Array | None) -> JaxState[S]:
        """This state with ``new`` the next params of the envs in ``where`` (all: ``None``); their running episodes
        keep theirs, as ``prior_params`` (``set_params``)."""
        running = self.params
        if where is None:
            return dataclasses.replace(
                self, next_params=new, prior_params=running, on_next=jnp.zeros_like(self.on_next)
            )
        return dataclasses.replace(
            self,
            next_params=select(where, new, self.next_params),
            prior_params=select(where, running, self.prior_params),
            on_next=self.on_next & ~where,
        )

    def running_on(self, params: Any) -> JaxState[S]:
        """This state with every env's running and next episodes on ``params`` (laid out as ``next_params``)."""
        on_next = None if params is None else jnp.ones(jnp.shape(self.steps), jnp.bool_)
        return dataclasses.replace(self, next_params=params, prior_params=params, on_next=on_next)


@dataclasses.dataclass(frozen=True)
class StateLayout:
    """The structure and leaf shapes of an env's states (``checked_state`` compares a state with them)."""

    shapes: JaxState[Any]  # the state with jax.ShapeDtypeStruct leaves
    treedef: Any
    leaf_shapes: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, state: JaxState[Any]) -> StateLayout:
        """The layout of ``state`` (concrete or traced)."""
        shapes = jax.tree.map(lambda x: jax.ShapeDtypeStruct(jnp.shape(x), x.dtype), state)
        leaves, treedef = jax.tree.flatten(shapes)
        return cls(shapes, treedef, tuple(x.shape for x in leaves))


def checked_state(env_id: str, method: str, state: Any, layout: StateLayout) -> JaxState[Any]:
    """``state``, after checking it is a state of this env: a ``JaxState`` of ``layout``'s structure and shapes.

    Checked while tracing too (structure and shapes are known there), so a state of another env, of another
    ``num_envs`` or of another reset mode is refused before any work, with a message instead of a ``vmap`` or
    attribute error. A good state costs one flatten (a few microseconds).

    Raises:
        InvalidArgumentError: ``state`` is not a ``JaxState`` (``(state, ts)``, a wrapper's state, an observation),
            holds ``jax.ShapeDtypeStruct`` leaves (a state from ``jax.eval_shape``), or differs from ``layout``.
    """
    if isinstance(state, JaxState):
        leaves, treedef = jax.tree.flatten(state)
        if treedef == layout.treedef and all(
            type(x) is not jax.ShapeDtypeStruct and getattr(x, "shape", None) == shape
            for x, shape in zip(leaves, layout.leaf_shapes)
        ):
            return state  # the fast path: arrays (tracers included) of this env's shapes
    _refuse(env_id, method, state, layout.shapes)
    return state


def _refuse(env_id: str, method: str, state: Any, want: JaxState[Any]) -> None:
    """Raise the error that says how ``state`` differs from ``want`` (the shapes of this env's states)."""
    fix = "pass the state this env's own init, reset or step returned"
    if not isinstance(state, JaxState):
        pair = isinstance(state, tuple) and len(state) == 2 and isinstance(state[0], JaxState)
        what = "(state, ts): init, reset and step return a pair, pass its first item" if pair else fix
        raise InvalidArgumentError(
            f"{method} of {env_id!r} takes one of its own states (a JaxState), not a value of type "
            f"{type(state).__name__}; {what}."
        )
    if any(isinstance(x, jax.ShapeDtypeStruct) for x in jax.tree.leaves(state)):
        raise InvalidArgumentError(
            f"{method} of {env_id!r} was given a state of jax.ShapeDtypeStructs (a state from jax.eval_shape: shapes, "
            f"no values); {fix}, or call {method} inside jax.eval_shape as well."
        )
    if np.shape(state.steps) != want.steps.shape:
        raise InvalidArgumentError(
            f"{method} of {env_id!r} was given a state of {_envs(np.shape(state.steps))}, but this env has "
            f"{_envs(want.steps.shape)}; {fix} (an env made with the same num_envs)."
        )
    if not same_structure(state, want):
        raise InvalidArgumentError(
            f"{method} of {env_id!r} was given a state of another structure than its own ({_structure(state, want)}): "
            f"a state of another env, or of another reset_mode or reset_spares; {fix}."
        )
    for (path, have), need in zip(jax.tree_util.tree_flatten_with_path(state)[0], jax.tree.leaves(want)):
        if np.shape(have) != need.shape:
            raise InvalidArgumentError(
                f"{method} of {env_id!r} was given a state whose state{jax.tree_util.keystr(path)} has shape "
                f"{np.shape(have)}, where this env's has {need.shape}: a state of another env; {fix}."
            )


def _envs(batch: tuple[int, ...]) -> str:
    return (
        "one env (unbatched)" if batch == () else f"num_envs={batch[0]}" if len(batch) == 1 else f"batch shape {batch}"
    )


def _structure(state: JaxState[Any], want: JaxState[Any]) -> str:
    """Where ``state`` first leaves ``want``'s structure, in words."""
    for field in ("env", "first", "spares", "next_params"):
        have, need = getattr(state, field), getattr(want, field)
        if same_structure(have, need) and (
            jax.tree_util.treedef_is_leaf(jax.tree.structure(need)) or type(have) is type(need)
        ):
            continue  # the same (a node of the same type: flax dataclasses of one field count compare equal)
        if (have is None) != (need is None):
            return f"state.{field} is {'None' if have is None else 'set'}, this env's is {'None' if need is None else 'set'}"
        if type(have) is not type(need):
            return f"state.{field} is a {_name(have)}, this env's a {_name(need)}"
        return f"state.{field} is {jax.tree.structure(have)}, this env's {jax.tree.structure(need)}"
    return f"{jax.tree.structure(state)}, this env's {jax.tree.structure(want)}"


def _name(x: Any) -> str:
    kind = type(x)
    return f"{kind.__module__}.{kind.__qualname__}"


jax.tree_util.register_dataclass(
    JaxState,
    data_fields=["env", "steps", "first", "spares", "next_params", "prior_params", "on_next"],
    meta_fields=[],
)


__all__ = ["JaxState", "StateLayout", "checked_state"]
