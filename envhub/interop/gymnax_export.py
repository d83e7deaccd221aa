"""``to_gymnax``: an unbatched JAX-native envhub env as a gymnax ``Environment`` (rejax, PureJaxRL, gymnax code).

gymnax's contract: ``reset(key, params) -> (obs, state)`` and ``step(key, state, action, params)``, which
auto-resets in the same step (``obs`` is the next episode's first after an end). ``step_returns=6`` gives
gymnax 1.0's ``(obs, state, reward, terminated, truncated, info)``, ``step_returns=5`` the classic
``(obs, state, reward, done, info)`` of rejax 0.1.3 and PureJaxRL. Either way ``info`` holds envhub's
``terminated``, ``truncated`` and the observation reached (``final_observation``, gymnax 1.0's key) beside
the env's own info. The params given to ``step`` are the ones used: they go into the envhub state on every
step, for the running episode and the next. Nothing is jitted here: gymnax code jits (and vmaps) itself. The
contract (refusals, final_obs, close, pickling) is ``envhub.interop.contract``'s; spaces follow ``leaves``' rule.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.params import as_arrays, checked_params
from envhub.errors import InvalidArgumentError
from envhub.interop.contract import Exported, Made, Target, check_state, library_missing
from envhub.interop.leaves import gymnax_style_space
from envhub.native.state import JaxState
from envhub.wrappers.base import Wrapper
from envhub.wrappers.episode import TimeLimit

try:
    from flax import struct
    from gymnax.environments import environment as gymnax_environment
    from gymnax.environments import spaces as gymnax_spaces
except ImportError as exc:  # pragma: no cover - exercised when gymnax is absent
    raise library_missing("to_gymnax", "gymnax", "gymnax") from exc

#: ``max_steps_in_episode`` of an env without a time limit (evaluation loops then run to the episode's end).
NO_LIMIT = 2**31 - 1
#: The names under which a backend holds its time limit in its params (gymnax's, craftax's and factoriax's, ...):
#: ``max_steps_in_episode`` follows the first one present (an int, equal to the env's time limit where it has one).
TIME_LIMIT_FIELDS = ("max_steps_in_episode", "max_timesteps", "max_episode_steps", "episode_length", "max_steps")

TARGET = Target(
    "to_gymnax",
    "gymnax",
    batched=False,
    jax_native=True,
    reached="info['final_observation']",
    fixes={
        "batched": " (gymnax code such as rejax and PureJaxRL vmaps env.reset and env.step itself)",
        "multi-agent": "use the PettingZoo export (envhub.interop.to_pettingzoo_parallel), or to_jaxmarl",
        "host": (
            ", and gymnax code calls reset whenever it likes (each would open host resources that nothing closes): "
            "use to_gymnasium_vector, or envhub.interop.to_sb3_vec_env, for host envs"
        ),
    },
)


def to_gymnax(env: Any, step_returns: int = 6) -> tuple[EnvhubGymnaxEnv, EnvhubGymnaxParams]:
    """Expose an unbatched single-agent JAX-native envhub env as a gymnax ``Environment``: ``(env, params)``.

    ``step_returns=6``: gymnax 1.0's ``(obs, state, reward, terminated, truncated, info)``; ``5``: the classic
    ``(obs, state, reward, done, info)`` of rejax 0.1.3 and PureJaxRL. The export pickles as this call.

    Raises:
        InvalidArgumentError: ``env`` is no envhub env, or batched, multi-agent or a host env, or drops ``final_obs``;
            ``step_returns`` is not the int 5 or 6; a space has no gymnax counterpart.
        ClosedEnvironmentError: ``env`` is closed.
    """
    exported = EnvhubGymnaxEnv(TARGET.check(env, step_returns=step_returns))
    return exported, exported.default_params


@struct.dataclass
class EnvhubGymnaxParams:
    """The params of a gymnax export: the envhub env's own (``env.default_params``; ``None`` where it has none).

    A pytree (vmap it, ``params.replace(env_params=...)``). ``max_steps_in_episode`` (read by rejax and
    PureJaxRL) is the time limit in ``env_params`` where the env holds it there (``limit_field``, one of
    ``TIME_LIMIT_FIELDS``: gymnax's ``max_steps_in_episode``, craftax's ``max_timesteps``, ...), capped by the
    ``TimeLimit`` wrappers around the env (``wrapper_limit``); else the env's fixed time limit (``time_limit``:
    ``metadata["time_limit"]``, wrappers' included); else ``NO_LIMIT``.
    """

    env_params: Any = None
    time_limit: int = struct.field(pytree_node=False, default=NO_LIMIT)
    wrapper_limit: int = struct.field(pytree_node=False, default=NO_LIMIT)
    limit_field: str | None = struct.field(pytree_node=False, default=None)

    @property
    def max_steps_in_episode(self) -> Any:
        own = None if self.limit_field is None else _field(self.env_params, self.limit_field)
        if own is None:
            return self.time_limit
        return own if self.wrapper_limit == NO_LIMIT else jnp.minimum(own, self.wrapper_limit)


class EnvhubGymnaxEnv(Exported, gymnax_environment.Environment):  # type: ignore[misc,unused-ignore]
    """An unbatched JAX-native envhub env behind gymnax's ``Environment`` API, made by ``to_gymnax`` (see the module
    docstring)."""

    def __init__(self, made: Made):
        self.made, self.env, self.step_returns = made, made.env, made.flags["step_returns"]
        env = self.env
        self._action_space = to_gymnax_space(env.action_space, "the action space")
        self._observation_space = to_gymnax_space(env.observation_space, "the observation space")
        limit = env.metadata.get("time_limit")
        self._state_shape = jax.eval_shape(env.init, jax.random.key(0))[0]  # what step takes (check_state)
        if env.default_params is not None:
            _check_state_holds_params(env.id, self._state_shape)
        self._default = EnvhubGymnaxParams(
            None if env.default_params is None else as_arrays(env.default_params),
            NO_LIMIT if limit is None else int(limit),
            _wrapper_limit(env),
            _limit_field(env),
        )

    @property
    def default_params(self) -> EnvhubGymnaxParams:
        return self._default

    @property
    def name(self) -> str:
        return self.env.id

    @property
    def num_actions(self) -> int:
        space = self._action_space
        return int(space.n) if isinstance(space, gymnax_spaces.Discrete) else int(np.prod(space.shape))

    def action_space(self, params: Any = None) -> Any:
        return self._action_space

    def observation_space(self, params: Any = None) -> Any:
        return self._observation_space

    def reset(self, key: jax.Array, params: EnvhubGymnaxParams | None = None) -> tuple[Any, Any]:
        """A new episode: ``(obs, state)``; ``state`` is the envhub env's."""
        env_params = self._env_params(params)
        state, ts = self.env.init(key) if env_params is None else self.env.init(key, params=env_params)
        return ts.obs, state

    def reset_env(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        return self.reset(key, params)

    def step(
        self, key: jax.Array, state: Any, action: Any, params: EnvhubGymnaxParams | None = None
    ) -> tuple[Any, ...]:
        """One step with same-step auto-reset: 6 values (gymnax 1.0) or 5 (``done``), as ``step_returns`` says."""
        env_params = self._env_params(params)
        check_state("step of the gymnax export", self.env, state, self._state_shape)
        if env_params is not None:
            checked = checked_params(self.env.id, self.env.default_params, env_params, None, self.env.params_bounds)
            state = _with_params(state, checked)
        state, ts = self.env.step(key, state, self._unsqueezed(action))
        reached = TARGET.final_obs(self.env.id, ts)
        info = {**ts.info, "terminated": ts.terminated, "truncated": ts.truncated, "final_observation": reached}
        if self.step_returns == 5:
            return ts.obs, state, ts.reward, ts.done, info
        return ts.obs, state, ts.reward, ts.terminated, ts.truncated, info

    def _unsqueezed(self, action: Any) -> Any:
        """``action`` in the action space's shape where it is that shape with the size-1 axes dropped.

        gymnax's continuous envs take a ``Box((1,))`` action as a scalar, and rejax's evaluation hands one
        (its ``act`` squeezes the policy's output); envhub checks the shape, so the dropped axes go back here.
        """
        space = self.env.action_space
        if isinstance(space, spaces.Tree) or not hasattr(action, "shape"):
            return action
        squeezed = tuple(n for n in space.shape if n != 1)
        if action.shape != space.shape and action.shape == squeezed:
            return jnp.reshape(action, space.shape)
        return action

    def step_env(self, key: jax.Array, state: Any, action: Any, params: Any) -> tuple[Any, ...]:
        raise NotImplementedError(
            f"the gymnax export of {self.env.id!r} auto-resets inside step (envhub's same-step reset); call "
            f"step(key, state, action, params): info['final_observation'] holds the observation reached."
        )

    def _env_params(self, params: EnvhubGymnaxParams | None) -> Any:
        if params is None:
            return self._default.env_params
        if not isinstance(params, EnvhubGymnaxParams):
            raise InvalidArgumentError(
                f"params of the gymnax export of {self.env.id!r} must be an EnvhubGymnaxParams, got "
                f"{type(params).__name__}: start from env.default_params, e.g. "
                f"params.replace(env_params=params.env_params.replace(...))."
            )
        return params.env_params

    def __deepcopy__(self, memo: dict[int, Any]) -> EnvhubGymnaxEnv:
        """``self``: static configuration, shared (rejax deep-copies its config; a remade env inside a trace fails)."""
        return self

    def __repr__(self) -> str:
        return f"EnvhubGymnaxEnv({self.env!r}, step_returns={self.step_returns})"


def to_gymnax_space(space: spaces.Space, what: str = "the observation space") -> Any:
    """The gymnax space of an envhub ``space`` (``envhub.interop.leaves``' rule): ``Discrete`` (one integer from 0,
    any integer dtype; gymnax's dtype where it holds it, int32 or int64 under x64, else int32), ``Box`` (other
    integer spaces with their inclusive bounds), ``Dict``/``Tuple`` of them."""
    return gymnax_style_space("to_gymnax", gymnax_spaces, what, space, _gymnax_int)


def _gymnax_int(dtype: Any) -> Any:
    """The dtype of gymnax's ``Discrete`` for an integer ``dtype``: itself where gymnax takes it, else int32."""
    dtype = jax.dtypes.canonicalize_dtype(dtype)
    return dtype if dtype in (np.int32, np.int64) else np.int32


def _field(params: Any, name: str) -> Any:
    """``params[name]`` or ``params.name``; ``None`` where it has none."""
    return params.get(name) if isinstance(params, dict) else getattr(params, name, None)


def _limit_field(env: Any) -> str | None:
    """The first of ``TIME_LIMIT_FIELDS`` in ``env.default_params`` holding an int equal to the env's time limit (any
    int where the env declares none): the field ``max_steps_in_episode`` follows."""
    limit = env.unwrapped.metadata.get("time_limit")
    for name in TIME_LIMIT_FIELDS:
        value = np.asarray(_field(env.default_params, name))
        if value.shape == () and value.dtype.kind in "iu" and (limit is None or int(value) == int(limit)):
            return name
    return None


def _wrapper_limit(env: Any) -> int:
    """The shortest ``TimeLimit`` among the wrappers around ``env`` (``NO_LIMIT``: none)."""
    limit = NO_LIMIT
    while isinstance(env, Wrapper):
        if isinstance(env, TimeLimit):
            limit = min(limit, env.max_steps)
        env = env.env
    return limit


def _is_jax_state(x: Any) -> bool:
    return isinstance(x, JaxState)


def _with_params(state: Any, params: Any) -> Any:
    """``state`` whose envhub ``JaxState`` (however deep in wrapper states) runs this and next episodes on ``params``."""
    return jax.tree.map(
        lambda s: s.running_on(params) if _is_jax_state(s) else s,
        state,
        is_leaf=_is_jax_state,
    )


def _check_state_holds_params(env_id: str, state: Any) -> None:
    """Refuse an env whose state does not hold exactly one ``JaxState`` (where step's params go)."""
    found = [x for x in jax.tree.leaves(state, is_leaf=_is_jax_state) if _is_jax_state(x)]
    if len(found) != 1:
        raise InvalidArgumentError(
            f"to_gymnax: the state of {env_id!r} holds {len(found)} envhub JaxStates, not one, so the params given "
            f"to step have no one place to go; export the env without the wrapper that hides it."
        )


__all__ = [
    "NO_LIMIT",
    "TARGET",
    "TIME_LIMIT_FIELDS",
    "EnvhubGymnaxEnv",
    "EnvhubGymnaxParams",
    "to_gymnax",
    "to_gymnax_space",
]
