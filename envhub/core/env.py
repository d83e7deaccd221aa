"""The ``Environment`` base class every backend implements."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import jax

from envhub import spaces
from envhub.core.action_check import check_action
from envhub.core.bounds import Bounds
from envhub.core.checking import STRICT, check_values, checks_values_on_host, outermost_check, validate_actions_value
from envhub.core.checking import values_checked_by_caller as values_checked_by_caller
from envhub.core.drawing import checked_frames, drawable_index
from envhub.core.exporting import register_for_export
from envhub.core.keys import check_key
from envhub.core.loop import CheckedLoop, Loop
from envhub.core.params import checked_params, checked_where
from envhub.core.tree import select
from envhub.core.types import TimeStep
from envhub.errors import ClosedEnvironmentError

if TYPE_CHECKING:  # typing.Self is 3.11+; the core depends on jax, numpy and pluggy only
    from typing_extensions import Self

State = TypeVar("State")
Obs = TypeVar("Obs")
Action = TypeVar("Action")


class Environment(abc.ABC, Generic[State, Obs, Action]):
    """A purely functional environment: keys and state go in, new state comes out.

    Backends implement ``_init``, ``_reset``, ``_step`` and the two space properties. The public
    ``init``/``reset``/``step`` add the checks every backend shares (use after close, action shape
    and dtype at trace time). Jitting is left to the caller.
    """

    #: Full id, e.g. ``"gymnax/CartPole-v1"``; set by ``envhub.make``.
    id: str = "<unregistered>"
    #: ``None`` for one environment, ``N`` when every leaf has a leading axis of ``N``.
    num_envs: int | None = None
    #: ``True`` when init/reset/step are pure JAX (so ``jax.vmap`` over them works).
    is_jax_native: bool = True
    #: What this env can draw: ``"rgb_array"`` (``render``), ``"html"`` (``envhub.record`` to ``.html``).
    render_modes: tuple[str, ...] = ()
    #: The agents of a multi-agent env, in their order (``docs/multi-agent.md``); ``()`` for a single-agent
    #: one. Where it is not empty, ``TimeStep.reward`` is a dict keyed by these names.
    agents: tuple[str, ...] = ()

    _closed: bool = False

    # --- what backends implement -------------------------------------------------------------

    # ``params``: passed (by keyword) only to an env with parameters (``default_params`` not None), checked first
    # (``envhub.core.params``); never passed otherwise, so a backend without them may leave it out of its signature.

    @abc.abstractmethod
    def _init(self, key: jax.Array, params: Any = None) -> tuple[State, TimeStep[Obs]]:
        """Create a state from scratch (may allocate host resources); ``params``: checked params, ``None`` for
        the defaults."""

    @abc.abstractmethod
    def _reset(self, key: jax.Array, state: State, params: Any = None) -> tuple[State, TimeStep[Obs]]:
        """Start a new episode, reusing the resources of ``state``; ``params``: checked params for the new
        episodes, ``None`` for those the state holds."""

    @abc.abstractmethod
    def _step(self, key: jax.Array, state: State, action: Action) -> tuple[State, TimeStep[Obs]]:
        """Advance one step, auto-resetting in the same step when the episode ends."""

    @property
    @abc.abstractmethod
    def action_space(self) -> spaces.Space:
        """Space of the ``action`` argument of ``step`` (batched when ``num_envs`` is set)."""

    @property
    @abc.abstractmethod
    def observation_space(self) -> spaces.Space:
        """Space of ``ts.obs`` (batched when ``num_envs`` is set)."""

    def _close(self) -> None:
        """Free host resources; the default has none to free."""

    def _render(self, state: State, index: int | None) -> Any:
        """RGB frames of a concrete ``state``: ``(H, W, 3)``, or ``(N, H, W, 3)`` when batched and ``index`` is None."""
        from envhub.errors import RenderError

        raise RenderError(
            self.id, f"the {type(self).__name__} backend has no renderer", "record its observations instead"
        )

    def _render_html(self, states: State, index: int) -> str:
        """An HTML page showing ``states`` (leaves lead with time); only some backends (brax) have one."""
        from envhub.errors import RenderError

        raise RenderError(self.id, "it has no HTML viewer (only brax has one)", "record to .gif or .mp4 instead")

    def _host_loop(self) -> Loop | None:
        """This env stepped from Python on NumPy arrays (``envhub.core.loop.Loop``), or ``None``: it has no such path."""
        return None

    @property
    def default_params(self) -> Any:
        """This env's parameters as data (a pytree), from ``make``'s kwargs; ``None`` where it has none (docs/params.md)."""
        return None

    @property
    def params_bounds(self) -> Bounds:
        """The ranges the values of params must lie in, keyed as ``default_params`` is (``envhub.core.bounds``),
        checked on eager calls and at ``make``."""
        return Bounds()

    def _set_params(self, state: State, params: Any, where: jax.Array | None) -> State:
        """``state`` whose next episodes (of the envs in ``where``) start with ``params``; only envs with params."""
        raise NotImplementedError

    @property
    def metadata(self) -> dict[str, Any]:
        """What ``envhub info`` shows beyond the spaces: ``time_limit``, ``library`` versions, backend notes."""
        return {}

    # --- the public API ----------------------------------------------------------------------

    def init(self, key: jax.Array, params: Any = None) -> tuple[State, TimeStep[Obs]]:
        """Return a new ``(state, timestep)`` from scratch; ``params`` (default: ``default_params``) live in the state."""
        self._check_open("init")
        check_key(self.id, "init", key)
        given = {} if params is None else {"params": self._checked(params)}  # see _init: only where given
        out = self._init(key, **given)
        register_for_export(out)  # so jax.export can serialize programs over them (envhub.core.exporting)
        space = self.action_space
        if isinstance(space, spaces.Tree):
            register_for_export(space.treedef)
        return out

    def reset(
        self, key: jax.Array, state: State, where: jax.Array | None = None, params: Any = None
    ) -> tuple[State, TimeStep[Obs]]:
        """Return the first ``(state, timestep)`` of a new episode.

        ``where`` (bool, the batch shape) resets only those environments; the others keep their
        state, and their entries of the returned TimeStep are unspecified (merge them yourself).
        ``params``: the new episodes' params (default: those ``set_params`` chose, else the state's).
        """
        self._check_open("reset")
        check_key(self.id, "reset", key)
        mask = None if where is None else checked_where(self.id, "reset", where, self.num_envs)
        given = {} if params is None else {"params": self._checked(params)}
        if mask is None:
            return self._reset(key, state, **given)
        return self._reset_where(key, state, mask, **given)

    def set_params(self, state: State, params: Any, where: jax.Array | None = None) -> State:
        """The ``state`` whose next episodes start with ``params`` (only the envs in ``where``, bool of the batch
        shape): a curriculum's step between updates. Running episodes keep their params until they end."""
        self._check_open("set_params")
        mask = None if where is None else checked_where(self.id, "set_params", where, self.num_envs)
        return self._set_params(state, self._checked(params), mask)

    def _checked(self, params: Any) -> Any:
        return checked_params(self.id, self.default_params, params, self.num_envs, self.params_bounds)

    def _reset_where(
        self, key: jax.Array, state: State, where: jax.Array, params: Any = None
    ) -> tuple[State, TimeStep[Obs]]:
        """Reset only where ``where``; the default (for JAX-native envs) resets all and selects."""
        if not self.is_jax_native:
            raise NotImplementedError(f"{type(self).__name__} ({self.id!r}) cannot reset a subset of its environments.")

        new_state, ts = self._reset(key, state, **({} if params is None else {"params": params}))
        return select(where, new_state, state), ts

    def step(self, key: jax.Array, state: State, action: Action) -> tuple[State, TimeStep[Obs]]:
        """Apply ``action``; when the episode ends, ``ts.obs`` is already the next episode's first.

        The action's structure, shape and dtype are checked at trace time; its values (out-of-range
        discrete values, non-finite floats) once per call, by the outermost wrapper, unless
        ``validate_actions`` is off: eagerly at once; inside ``jit`` only when asked (``envhub.checked``),
        or as a hard stop with ``validate_actions="strict"``; see ``envhub.core.checking`` and docs/errors.md.
        """
        self._check_open("step")
        check_key(self.id, "step", key)
        action = check_action(self.id, self.action_space, action)
        with outermost_check(self) as mode:
            if mode:
                action = check_values(self.id, self.action_space, action, hard_stop=mode == STRICT)
            return self._step(key, state, action)

    def render(self, state: State, index: int | None = None) -> Any:
        """Draw a concrete (not traced) ``state`` as uint8 RGB frames; see ``envhub.tools.render``.

        Returns ``(H, W, 3)``, or ``(N, H, W, 3)`` for a batched env; ``index=i`` draws only env ``i``.

        Raises:
            RenderError: the backend cannot draw, or ``state`` is traced (render outside ``jit``).
            ClosedEnvironmentError: after ``close()``; StaleStateError: an old host state.
        """
        if self.closed:
            raise ClosedEnvironmentError(self.id, "render")
        index = drawable_index(self.id, self.num_envs, state, index)
        return checked_frames(self.id, self._render(state, index), batched=self.num_envs is not None and index is None)

    def host_loop(self) -> CheckedLoop | None:
        """This env stepped from Python on NumPy arrays, no compiled call per step (``envhub.core.loop``), where its
        backend has such a path (host backends); ``None`` for others and for a wrapped env (drive them compiled)."""
        self._check_open("host_loop")
        loop = self._host_loop() if self.unwrapped is self else None
        return None if loop is None else CheckedLoop(self, loop)

    @property
    def single_action_space(self) -> spaces.Space:
        """Action space of one environment of the batch (``action_space`` when unbatched)."""
        return self.action_space

    @property
    def single_observation_space(self) -> spaces.Space:
        """Observation space of one environment of the batch."""
        return self.observation_space

    @property
    def validate_actions(self) -> bool | str:
        """How ``step`` checks action values: ``True`` (eagerly, and for ``checkify`` in jit), ``"strict"``
        (also a hard stop in jit, through a host callback) or ``False`` (not at all).

        One setting per wrapper chain: it lives on the innermost environment. Set it before tracing.
        """
        return self.unwrapped.__dict__.get("_validate_actions", True)

    @validate_actions.setter
    def validate_actions(self, value: bool | str) -> None:
        self.unwrapped.__dict__["_validate_actions"] = validate_actions_value(value)

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has been called."""
        return self._closed

    def close(self) -> None:
        """Free host resources; calling it twice is harmless."""
        if not self._closed:
            self._closed = True
            self._close()

    @property
    def unwrapped(self) -> Environment[Any, Any, Any]:
        """The innermost environment (this one, unless wrapped)."""
        return self

    def get_wrapper(self, wrapper_type: type[EnvT]) -> EnvT | None:
        """The outermost wrapper of ``wrapper_type`` around this environment, or ``None``."""
        env: Any = self
        while env is not None:
            if isinstance(env, wrapper_type):
                return env
            env = env.__dict__.get("env")
        return None

    def has_wrapper(self, wrapper_type: type[Environment[Any, Any, Any]]) -> bool:
        """Whether a wrapper of ``wrapper_type`` is in this environment's chain."""
        return self.get_wrapper(wrapper_type) is not None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle: an env from ``envhub.make`` as its id and kwargs, a wrapper as its fields (``envhub.core.pickling``)."""
        from envhub.core.pickling import reduce_env

        return reduce_env(self, protocol)

    def __copy__(self) -> Self:
        copied = object.__new__(type(self))
        copied.__dict__.update(self.__dict__)
        return copied

    def __repr__(self) -> str:
        batch = f", num_envs={self.num_envs}" if self.num_envs is not None else ""
        return f"<{type(self).__name__} {self.id!r}{batch}{' closed' if self._closed else ''}>"

    def _check_open(self, method: str) -> None:
        if self.closed:
            raise ClosedEnvironmentError(self.id, method)


EnvT = TypeVar("EnvT", bound=Environment[Any, Any, Any])


__all__ = [
    "STRICT",
    "Environment",
    "EnvT",
    "checks_values_on_host",
    "validate_actions_value",
    "values_checked_by_caller",
]
