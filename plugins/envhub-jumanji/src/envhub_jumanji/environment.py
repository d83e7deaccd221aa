"""``JumanjiEnvironment``: a jumanji environment behind the envhub API."""

from __future__ import annotations

import dataclasses
import importlib.metadata
from typing import Any

import jax
import jax.numpy as jnp
import jumanji
import numpy as np
from jumanji import specs
from jumanji.types import StepType

import envhub
from envhub.plugin import JaxStep, positive_int, spaces, take_time_limit, truncated_unless_terminated

# jumanji environments whose own time limit is a true truncation (``StepType.LAST`` with discount 1):
# ``max_episode_steps`` is their ``time_limit`` and jumanji's flags are kept as they are.
TRUNCATES_ITSELF = frozenset({"Connector-v3", "LevelBasedForaging-v0"})

# The other environments with a ``time_limit`` end an episode at it with discount 0, a termination.
# envhub reports a time limit as truncation: their jumanji ``time_limit`` is set one step past
# ``max_episode_steps`` (so it never fires) and envhub's base truncates at ``max_episode_steps``.
# SearchAndRescue scales its rewards by the time limit: its reward function is shown the real one.
REWARD_SEES_LIMIT = frozenset({"SearchAndRescue-v0"})

# jumanji specs that do not contain jumanji's own observations (found by the conformance kit), per
# observation field: TSP's ``position`` is -1 until the first city is visited, outside its
# ``DiscreteArray(num_cities)``.
SPACE_FIXES = {"TSP-v1": {"position": lambda s: spaces.Discrete(int(s.nvec) + 1, start=-1, dtype=s.dtype)}}


class JumanjiEnvironment(envhub.JaxEnvironment[Any, Any, Any]):
    """One jumanji environment on envhub's JAX base: jumanji's ``reset``/``step`` (no auto-reset wrapper:
    the base auto-resets in the same step); ``StepType.LAST`` with all discounts 0 is ``terminated``,
    any other ``LAST`` (jumanji's ``truncation``) is ``truncated``."""

    def __init__(
        self,
        name: str,
        *,
        num_envs: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        **kwargs: Any,
    ):
        limit = take_time_limit(kwargs, "time_limit", None)
        self.jumanji_env = jumanji.make(name, **kwargs)
        own_limit = getattr(self.jumanji_env, "time_limit", None)  # only environments that have one
        base_limit = limit
        if own_limit is not None:
            if limit is None:
                limit = own_limit
            where = f"(jumanji's {name} needs a time limit; its default is {own_limit})"
            limit = positive_int("max_episode_steps", limit, where=where)
            if name in TRUNCATES_ITSELF:
                base_limit, jumanji_limit = None, limit
            else:
                base_limit, jumanji_limit = limit, limit + 1
                if name in REWARD_SEES_LIMIT:
                    kwargs["reward_fn"] = _RewardWithLimit(kwargs.get("reward_fn") or _default_reward_fn(), limit)
            if jumanji_limit != own_limit or name in REWARD_SEES_LIMIT:
                self.jumanji_env = jumanji.make(name, **kwargs, time_limit=jumanji_limit)
        self.name, self.time_limit = name, limit
        obs_space = to_envhub_space(self.jumanji_env.observation_spec)
        fixes = SPACE_FIXES.get(name, {})
        if fixes:
            fields = obs_space.spaces
            obs_space = spaces.Tree(fields._replace(**{k: fix(getattr(fields, k)) for k, fix in fixes.items()}))
        super().__init__(
            observation_space=obs_space,
            action_space=to_envhub_space(self.jumanji_env.action_spec),
            num_envs=num_envs,
            max_episode_steps=base_limit,
            reset_mode=reset_mode,
            reset_spares=reset_spares,
        )
        self.multi_agent = jax.eval_shape(self.jumanji_env.reset, jax.random.key(0))[1].reward.shape != ()

    @property
    def metadata(self) -> dict[str, Any]:
        return {**super().metadata, "time_limit": self.time_limit, "library": f"jumanji {_version()}"}

    def _reset_one(self, key: jax.Array) -> tuple[Any, Any]:
        state, timestep = self.jumanji_env.reset(key)
        return state, timestep.observation

    def _step_one(self, key: jax.Array, state: Any, action: Any) -> JaxStep:
        # jumanji's step takes no key: its state carries one (the base's key is used for resets).
        state, timestep = self.jumanji_env.step(state, action)
        reward, terminated, truncated = flags(timestep)
        return JaxStep(
            state=state,
            obs=timestep.observation,
            reward=reward,
            terminated=terminated,
            truncated=truncated,
            info=self._info(timestep),
        )

    def _info(self, timestep: Any) -> dict[str, Any]:
        info = {**timestep.extras, "discount": timestep.discount}
        if self.multi_agent:
            info["agent_rewards"] = timestep.reward
        return info


def flags(timestep: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(reward, terminated, truncated)`` of a jumanji TimeStep: ``LAST`` with discount 0 (every agent's)
    is a termination, any other ``LAST`` a truncation; a multi-agent reward is the agents' sum."""
    last = timestep.step_type == StepType.LAST
    terminated = last & jnp.all(timestep.discount == 0)
    reward = jnp.sum(timestep.reward).astype(jnp.float32)
    return reward, terminated, truncated_unless_terminated(terminated, last)


@dataclasses.dataclass(frozen=True)
class _RewardWithLimit:
    """A SearchAndRescue reward function shown the time limit envhub truncates at (jumanji's own is one more)."""

    reward_fn: Any
    time_limit: int

    def __call__(self, found_targets: Any, step: Any, time_limit: Any) -> Any:
        return self.reward_fn(found_targets, step, self.time_limit)


def to_envhub_space(spec: Any) -> spaces.Space:
    """Convert a jumanji spec to an envhub space with the same dtype: ``DiscreteArray`` -> ``Discrete``,
    ``MultiDiscreteArray`` and integer ``BoundedArray`` -> ``MultiDiscrete``, other ``BoundedArray`` and
    ``Array`` -> ``Box``, a structured spec -> ``Tree`` of its observation type (a NamedTuple or dataclass)."""
    if isinstance(spec, specs.DiscreteArray):
        return spaces.Discrete(int(spec.num_values), dtype=spec.dtype)
    if isinstance(spec, specs.MultiDiscreteArray):
        return spaces.MultiDiscrete(np.asarray(spec.num_values), dtype=spec.dtype)
    if isinstance(spec, specs.BoundedArray):
        low = np.broadcast_to(np.asarray(spec.minimum), spec.shape)
        high = np.broadcast_to(np.asarray(spec.maximum), spec.shape)
        if np.dtype(spec.dtype).kind in "iu":
            nvec = high.astype(np.int64) - low + 1
            if spec.shape == ():
                return spaces.Discrete(int(nvec), start=int(low), dtype=spec.dtype)
            return spaces.MultiDiscrete(nvec, start=low, dtype=spec.dtype)
        return spaces.Box(low, high, spec.shape, spec.dtype)
    if isinstance(spec, specs.Array):
        bool_dtype = np.dtype(spec.dtype) == np.bool_
        return spaces.Box(False if bool_dtype else -np.inf, True if bool_dtype else np.inf, spec.shape, spec.dtype)
    # A structured spec: its children (attributes that are specs) in the type jumanji builds from them.
    children = {k: to_envhub_space(v) for k, v in vars(spec).items() if isinstance(v, specs.Spec)}
    value = spec.generate_value()
    return spaces.Tree(
        value._replace(**children) if hasattr(value, "_replace") else dataclasses.replace(value, **children)
    )


def _default_reward_fn() -> Any:
    from jumanji.environments.swarms.search_and_rescue.reward import IndividualRewardFn

    return IndividualRewardFn()


def _version() -> str:
    return importlib.metadata.version("jumanji")
