"""``to_stoa``: an unbatched JAX-native envhub env as a Stoa ``Environment`` (Stoix's environment API).

Stoa's contract: ``reset(rng_key, env_params) -> (state, timestep)`` and ``step(state, action, env_params)``, a
``TimeStep(step_type, reward, discount, observation, extras)`` with step types FIRST, MID, TERMINATED and
TRUNCATED. The export's step is envhub's, so envhub's rules (actions, time limits, wrappers) all hold:

- ``step_type`` is TERMINATED where ``ts.terminated`` (discount 0), TRUNCATED where ``ts.truncated`` (discount 1:
  bootstrap), else MID; ``reset`` gives FIRST. ``extras`` is the env's ``info`` (one structure at reset and step).
- A LAST step's ``observation`` is the observation the episode reached (``ts.final_obs``), as Stoa's contract
  wants: its auto-reset wrappers (``AutoResetWrapper``, ``CachedAutoResetWrapper``, ``OptimisticResetVmapWrapper``)
  restart the episode and, with ``next_obs_in_extras=True``, keep that observation in ``extras["next_obs"]``,
  where Stoix's PPO bootstraps from it on truncation.
- Restarts are Stoa's, as over its brax and jumanji adapters: the export steps a copy of the env that leaves ended
  episodes as they ended (``envhub.native.auto_reset.leaving_restarts``; the env given is untouched), so a LAST
  step's state is the one the episode ended in, and Stoa's auto-reset wrappers restart it with ``reset``: one reset
  per episode end, not envhub's and then Stoa's. Stepped on without a reset, the episode goes on from where it ended.
- ``env_params`` are envhub's params as data (``env.default_params``' structure; ``None``: the env's own): ``reset``
  starts the episode on them, ``step`` runs on them from that step on (they go into the envhub state), so new
  values never recompile. Stoa's auto-reset wrappers reset without ``env_params``, so an episode they restart
  starts from the env's defaults (``envhub.make``'s kwargs) and runs on the params its steps are given.
- The state is Stoa's ``AdapterStateWithKey``: the envhub state (``state.base_env_state``) and the key of its next
  step. Nothing is jitted here: Stoa code jits (and vmaps) itself.

The contract (refusals, final_obs, close, pickling) is ``envhub.interop.contract``'s; spaces follow ``leaves``' rule.
"""

from __future__ import annotations

import types
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.params import as_arrays, checked_params
from envhub.errors import InvalidArgumentError
from envhub.interop.contract import Exported, Made, Target, check_state, library_missing
from envhub.interop.leaves import discrete_n, inclusive_bounds, multi_discrete_nvec, target_space
from envhub.native.auto_reset import leaving_restarts
from envhub.native.state import JaxState

try:
    import stoa
    from stoa.core_wrappers import optimistic_auto_reset
    from stoa.env_adapters.base import AdapterStateWithKey
    from stoa.utility_wrappers import extras_transforms
except ImportError as exc:  # pragma: no cover - exercised when stoa-env is absent
    raise library_missing("to_stoa", "stoa-env", "stoa") from exc


class _JaxWithTreeMap(types.ModuleType):
    """``jax`` as Stoa 0.1.2's two modules below see it: with ``tree_map``, which jax 0.6 removed."""

    tree_map = staticmethod(jax.tree.map)

    def __getattr__(self, name: str) -> Any:
        return getattr(jax, name)


# Stoa 0.1.2's OptimisticResetVmapWrapper and ConsistentExtrasWrapper (Stoix's stacks) call jax.tree_map, gone
# since jax 0.6 (every jax envhub supports): only those two modules get the alias, jax itself is left as it is.
for _module in (optimistic_auto_reset, extras_transforms):
    if not hasattr(jax, "tree_map") and _module.jax is jax:
        _module.jax = _JaxWithTreeMap("jax")

TARGET = Target(
    "to_stoa",
    "Stoa",
    batched=False,
    jax_native=True,
    reached="observation of a TERMINATED or TRUNCATED step (extras['next_obs'] under Stoa's auto-reset wrappers)",
    fixes={
        "batched": " (Stoa batches outside its auto-reset wrappers: VmapWrapper or OptimisticResetVmapWrapper)",
        "multi-agent": "use envhub.interop.to_jumanji (Mava) or envhub.interop.to_jaxmarl for multi-agent envs",
        "host": (
            ": Stoix steps host envs from its Sebulba actors, through envhub.interop.sebulba_factory(id) "
            "(factory(num_envs) gives the vector env they expect)"
        ),
    },
)


def to_stoa(env: Any) -> EnvhubStoaEnv:
    """Expose an unbatched single-agent JAX-native envhub env as a Stoa ``Environment``; Stoa's wrapper stacks
    (``AddRNGKey``, ``RecordEpisodeMetrics``, the auto-reset and vmap wrappers) run on it unchanged. It pickles as
    this call.

    Raises:
        InvalidArgumentError: ``env`` is no envhub env, or batched, multi-agent or a host env, or drops
            ``final_obs``; a space has no Stoa counterpart.
        ClosedEnvironmentError: ``env`` is closed.
    """
    return EnvhubStoaEnv(TARGET.check(env))


class EnvhubStoaEnv(Exported, stoa.Environment):  # type: ignore[misc,unused-ignore]
    """An unbatched JAX-native envhub env behind Stoa's ``Environment`` API, made by ``to_stoa`` (see the module
    docstring)."""

    def __init__(self, made: Made):
        self.made, self.env = made, leaving_restarts(made.env)  # Stoa's wrappers restart episodes
        self._action_space = to_stoa_space(self.env.action_space, "the action space")
        self._observation_space = to_stoa_space(self.env.observation_space, "the observation space")
        self._state_shape = jax.eval_shape(self.env.init, jax.random.key(0))[0]  # what step takes (check_state)
        if self.env.default_params is not None:
            _holds_one_jax_state(self.env.id, self._state_shape)

    @property
    def default_params(self) -> Any:
        """The env's params as arrays (``env.default_params``; ``None`` where it has none): the ``env_params`` to
        start from (``jax.tree.map``, ``.replace``)."""
        return None if self.env.default_params is None else as_arrays(self.env.default_params)

    def reset(self, rng_key: jax.Array, env_params: Any = None) -> tuple[Any, Any]:
        """A new episode on ``env_params`` (``None``: the env's own): ``(state, timestep)``, its step type FIRST."""
        init_key, state_key = jax.random.split(rng_key)
        params = self._checked(env_params)
        state, ts = self.env.init(init_key) if params is None else self.env.init(init_key, params=params)
        first = stoa.TimeStep(stoa.StepType.FIRST, ts.reward, jnp.float32(1.0), ts.obs, dict(ts.info))
        return AdapterStateWithKey(base_env_state=state, rng_key=state_key), first

    def step(self, state: Any, action: Any, env_params: Any = None) -> tuple[Any, Any]:
        """One envhub step (on ``env_params`` where given): a LAST step shows the observation reached, and its state
        is the ended episode's (Stoa's auto-reset wrappers restart it)."""
        if not isinstance(state, AdapterStateWithKey):
            raise InvalidArgumentError(
                f"step of the Stoa export of {self.env.id!r} was given a {type(state).__name__} as its state, not the "
                f"AdapterStateWithKey its reset and step return; pass that state (state, timestep = env.reset(key))."
            )
        env_state = state.base_env_state
        check_state("step of the Stoa export", self.env, env_state, self._state_shape)
        params = self._checked(env_params)
        if params is not None:  # this step and the next ones run on them (the running episode's and the next)
            env_state = jax.tree.map(
                lambda s: s.running_on(params) if isinstance(s, JaxState) else s,
                env_state,
                is_leaf=lambda s: isinstance(s, JaxState),
            )
        step_key, next_key = jax.random.split(state.rng_key)
        env_state, ts = self.env.step(step_key, env_state, action)
        reached = TARGET.final_obs(self.env.id, ts)
        kind = jnp.where(ts.truncated, stoa.StepType.TRUNCATED, stoa.StepType.MID)
        kind = jnp.where(ts.terminated, stoa.StepType.TERMINATED, kind)
        discount = jnp.where(ts.terminated, 0.0, 1.0).astype(jnp.float32)
        out = stoa.TimeStep(kind, ts.reward, discount, reached, dict(ts.info))
        return AdapterStateWithKey(base_env_state=env_state, rng_key=next_key), out

    def _checked(self, env_params: Any) -> Any:
        if env_params is None:
            return None
        return checked_params(self.env.id, self.env.default_params, env_params, None, self.env.params_bounds)

    def observation_space(self, env_params: Any = None) -> Any:
        return self._observation_space

    def action_space(self, env_params: Any = None) -> Any:
        return self._action_space

    def state_space(self, env_params: Any = None) -> Any:
        raise NotImplementedError(  # as Stoa's own adapters: its wrappers and Stoix never ask
            f"the Stoa export of {self.env.id!r} has no state space (envhub describes observations and actions only); "
            f"use observation_space()."
        )

    def render(self, state: Any, env_params: Any = None) -> Any:
        """The env's frame of ``state`` (``env.render``: an RGB array; the env made with ``render_mode``)."""
        return self.env.render(state.base_env_state)

    __eq__ = object.__eq__  # Stoa's Environment is a field-less dataclass: every export would equal every other
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"EnvhubStoaEnv({self.env!r})"


def to_stoa_space(space: spaces.Space, what: str = "the observation space") -> Any:
    """The Stoa space of an envhub ``space`` (``envhub.interop.leaves``' rule): ``DiscreteSpace`` (one integer from 0,
    its dtype kept), ``MultiDiscreteSpace`` (one axis from 0), ``BoundedArraySpace`` (a ``Box``, or another integer
    space with its inclusive bounds: one value each where all are equal), ``DictSpace``/``TupleSpace`` of them."""

    def leaf(sub: spaces.Space) -> Any:
        dtype = jax.dtypes.canonicalize_dtype(sub.dtype)
        n, nvec = discrete_n(sub), multi_discrete_nvec(sub)
        if n is not None or nvec is not None:
            return stoa.DiscreteSpace(n, dtype) if n is not None else stoa.MultiDiscreteSpace(nvec, dtype)
        if not isinstance(sub, (spaces.Box, spaces.MultiDiscrete)):
            return None
        low, high = (_one_if_uniform(np.asarray(b, dtype)) for b in inclusive_bounds(sub))
        return stoa.BoundedArraySpace(sub.shape, dtype, low, high)

    def node(children: Any) -> Any:
        return stoa.DictSpace(dict(children)) if isinstance(children, dict) else stoa.TupleSpace(list(children))

    return target_space("to_stoa", "Stoa", what, space, leaf, node)


def _one_if_uniform(bound: np.ndarray) -> np.ndarray:
    """``bound`` as one value where all its entries are equal, as Stoa's own adapters give them (Stoa broadcasts it):
    Stoix's continuous systems read ``float(env.action_space().minimum)``."""
    return bound.reshape(-1)[0] if bound.size and (bound == bound.reshape(-1)[0]).all() else bound


def _holds_one_jax_state(env_id: str, state: Any) -> None:
    """Refuse an env with params whose state does not hold exactly one ``JaxState`` (where step's params go)."""
    count = sum(isinstance(x, JaxState) for x in jax.tree.leaves(state, is_leaf=lambda x: isinstance(x, JaxState)))
    if count != 1:
        raise InvalidArgumentError(
            f"to_stoa: the state of {env_id!r} holds {count} envhub JaxStates, not one, so the env_params given to "
            f"step have no one place to go; export the env without the wrapper that hides it."
        )


__all__ = ["TARGET", "EnvhubStoaEnv", "to_stoa", "to_stoa_space"]
