"""``sebulba_factory``: the env factory of Stoix's Sebulba actor threads, for any single-agent envhub env.

A Sebulba actor calls ``envs = factory(num_envs)`` once, then ``envs.reset(seed=seeds)`` (a list, one int per env)
and ``envs.step(action)``, each returning a Stoa ``TimeStep(step_type, reward, discount, observation, extras)`` of
``num_envs`` rows, and ``envs.close()``; the learner asks ``factory(num_envs=1)`` for ``action_space()`` and
``observation_space()``. The vector env is host-side and stateful: it makes ``envhub.make(env_id, num_envs=...,
**make_kwargs)`` and keeps the key and the state inside, for host backends (envpool, ALE, gymnasium) and JAX-native
ones alike: an env with a host loop (``env.host_loop()``: envpool, gymnasium, ALE) is stepped from Python
(``compiled.HostRunner``, no compiled call per step), any other (JAX-native) by one compiled call per step
(``compiled.Runner``).

- ``step_type`` is TERMINATED where ``ts.terminated`` (discount 0), TRUNCATED where ``ts.truncated`` (discount 1:
  bootstrap), else MID; ``reset`` gives FIRST. envhub auto-resets in the same step, as Stoix's own adapters do:
  ``observation`` is the next episode's first where an episode ended, and ``extras["next_obs"]`` is the observation
  each step reached (``ts.final_obs``), the key Stoa's ``AutoResetWrapper(next_obs_in_extras=True)`` uses.
- ``extras["metrics"]`` is Stoix's: ``episode_return`` and ``episode_length`` of the episode that ended at this step
  where ``is_terminal_step`` (else the last finished episode's, 0 before any), counted per env from ``reset``. The
  return sums ``info["reward"]`` where the env gives it (``SCORE``: envpool's Atari, the game's score before
  ``reward_clip``), as Stoix's ``EnvPoolToStoa`` does, else the reward.
  The other entries of ``extras`` are the env's ``info``.
- Arrays: with ``device`` given to ``sebulba_factory`` (a JAX device), every array of a TimeStep is placed there and
  JAX-native envs step there; with ``None`` (the default) the TimeStep holds NumPy arrays on the host, as Stoix's own
  envpool and gymnasium factories give them, and JAX-native envs step on the JAX default device of each call, which a
  Stoix actor sets to its own (``with jax.default_device(actor_device)``): one factory serves actors on several
  devices. Each call of the factory makes its own env, key and counters: vector envs made in several threads at once
  share nothing mutable. ``close()`` closes the env it made.

The contract (refusals, final_obs) is ``envhub.interop.contract``'s; spaces are ``to_stoa``'s (``leaves``' rule).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

from envhub.core.arguments import positive_int
from envhub.errors import InvalidArgumentError
from envhub.interop.compiled import HostRunner, Runner
from envhub.interop.contract import Exported, Made, Target, library_missing, owning
from envhub.interop.flags import checked_device, checked_seed

try:
    import stoa
except ImportError as exc:  # pragma: no cover - exercised when stoa-env is absent
    raise library_missing("sebulba_factory", "stoa-env", "stoa") from exc

from envhub.interop.stoa_export import to_stoa_space  # noqa: E402 (needs stoa, checked above)

#: The info key of an env's unclipped reward (envpool's): what the episode return counts where an env has it.
SCORE = "reward"

TARGET = Target(
    "sebulba_factory",
    "Stoix",
    batched=True,
    reached="extras['next_obs']",
    fixes={"multi-agent": "Stoix's Sebulba systems train one agent; for Mava use envhub.interop.to_jumanji"},
)


def sebulba_factory(env_id: str, *, device: Any = None, **make_kwargs: Any) -> SebulbaFactory:
    """The env factory of Stoix's Sebulba actors: ``factory(num_envs)`` makes ``envhub.make(env_id,
    num_envs=num_envs, **make_kwargs)`` and returns it as the stateful vector env they step (see the module
    docstring), its arrays on ``device`` (a JAX device or its name, ``"cpu:0"``; ``None``: NumPy arrays on the host,
    JAX-native envs stepping on the JAX default device of each call, as ``jax.default_device`` sets it).

    Raises:
        InvalidArgumentError: ``env_id`` is no string; ``device`` is none this install has; ``num_envs`` is given
            here (the actor gives it).
    """
    if not isinstance(env_id, str):
        raise InvalidArgumentError(
            f"sebulba_factory({env_id!r}): the env id must be a string such as 'gymnax/CartPole-v1'; pass the id, "
            f"not an env (the factory makes one env per actor)."
        )
    if "num_envs" in make_kwargs:
        raise InvalidArgumentError(
            f"sebulba_factory({env_id!r}, num_envs={make_kwargs['num_envs']!r}): each actor gives num_envs when it "
            f"calls the factory (factory(num_envs)); leave it out here."
        )
    return SebulbaFactory(env_id, jax_device(device), dict(make_kwargs))


def jax_device(given: Any) -> Any:
    """The JAX device ``given`` names (a ``jax.Device`` or its ``str``), or ``None`` (the default device of each call)."""
    if given is None:
        return None
    devices = {str(d): d for d in all_devices()}
    name = str(given) if isinstance(given, (jax.Device, str)) else None
    return checked_device("sebulba_factory", given, devices.get(name) if name else None, list(devices))


def all_devices() -> list[Any]:
    """Every device of this install: the default backend's, then the CPU's where that is another."""
    found = list(jax.devices())
    return found + [d for d in jax.devices("cpu") if d not in found]


class SebulbaFactory:
    """``sebulba_factory``'s callable: holds the id, the make kwargs and the device, nothing that changes."""

    def __init__(self, env_id: str, device: Any, make_kwargs: Mapping[str, Any]):
        self.env_id, self.device, self.make_kwargs = env_id, device, dict(make_kwargs)

    def __call__(self, num_envs: int) -> SebulbaVectorEnv:
        """A new vector env of ``num_envs`` envs (its own env, key and counters).

        Raises:
            InvalidArgumentError: ``num_envs`` is no int >= 1; the env is multi-agent or drops ``final_obs``.
        """
        from envhub.registry import api  # as register_gymnasium's makers: envhub.make, imported when used

        num_envs = positive_int("num_envs", num_envs, where="for the Sebulba factory")
        env = api.make(self.env_id, num_envs=num_envs, **self.make_kwargs)
        try:
            return owning(SebulbaVectorEnv(TARGET.check(env), self, num_envs))
        except BaseException:
            env.close()
            raise

    def __reduce__(self) -> Any:
        return _factory_again, (self.env_id, _name(self.device), self.make_kwargs)

    def __repr__(self) -> str:
        return f"sebulba_factory({self.env_id!r}, device={_name(self.device)!r}, **{self.make_kwargs!r})"


def _name(device: Any) -> str | None:
    return None if device is None else str(device)


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # handed out and kept by the actor while this env goes on
    return a


def _factory_again(env_id: str, device: str | None, make_kwargs: dict[str, Any]) -> SebulbaFactory:
    return sebulba_factory(env_id, device=device, **make_kwargs)  # a JAX device pickles by its name


def _called(factory: SebulbaFactory, num_envs: int) -> SebulbaVectorEnv:
    return factory(num_envs)


class SebulbaVectorEnv(Exported):
    """A batched envhub env as the stateful vector env of a Sebulba actor, made by a ``sebulba_factory``'s call."""

    def __init__(self, made: Made, factory: SebulbaFactory, num_envs: int):
        self.made, self.env, self.factory, self.device = made, made.env, factory, factory.device
        self.num_envs = num_envs
        # stepped from Python where the env has a host loop (host backends: no compiled call per step), else by one
        # compiled call per step; the key stream until reset(seed=...) is seed 0's either way
        loop = self.env.host_loop()
        self._runner = Runner(self.env, 0) if loop is None else HostRunner(self.env, loop, 0)
        self._action_space = to_stoa_space(self.env.single_action_space, "the action space")
        self._observation_space = to_stoa_space(self.env.single_observation_space, "the observation space")
        n = num_envs
        # the arrays of a step where no episode ends are the same each step: made once, read-only
        self._quiet = (_read_only(np.full(n, stoa.StepType.MID, np.int8)), _read_only(np.ones(n, np.float32)))
        self._not_done = _read_only(np.zeros(n, bool))
        self._start_counting()

    def _start_counting(self) -> None:
        """Every env's running episode return and length (private, counted in place) and the last finished ones."""
        self._returns, self._lengths = np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, np.int32)
        self._last = (_read_only(np.zeros(self.num_envs, np.float32)), _read_only(np.zeros(self.num_envs, np.int32)))

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        """Start every env anew: ``seed`` a list of ``num_envs`` ints (Stoix's), one int, or ``None`` (the key
        stream goes on); a FIRST TimeStep, the counters at 0."""
        if options is not None:
            raise InvalidArgumentError(
                f"reset(options={options!r}) of the Sebulba env of {self.env.id!r}: it takes no options (every env "
                f"starts anew); pass seed only."
            )
        seed = checked_seed(seed, none=True)
        if isinstance(seed, list) and len(seed) != self.num_envs:
            raise InvalidArgumentError(
                f"reset(seed={seed!r}) of the Sebulba env of {self.env.id!r}: {len(seed)} seeds for {self.num_envs} "
                f"envs; pass one seed per env (a list of {self.num_envs} ints)."
            )
        with self._on_device():
            ts = self._runner.reset(seed)
        self._start_counting()
        kind = _read_only(np.full(self.num_envs, stoa.StepType.FIRST, np.int8))
        return self._timestep(kind, self._quiet[1], ts, ts.obs, self._not_done)

    def step(self, action: Any) -> Any:
        """Step every env (envhub auto-resets the ones whose episode ends, in this step); the TimeStep on the device.

        Raises:
            ActionError: ``action`` is one ``env.step`` refuses (checked on the host before anything runs).
            InvalidArgumentError: ``step`` before ``reset``.
        """
        with self._on_device():
            ts = self._runner.step(np.asarray(action))
        reached = TARGET.final_obs(self.env.id, ts)
        score = ts.info.get(SCORE, ts.reward)  # the game's score where the env gives it beside a clipped reward
        self._returns += np.asarray(score, np.float32).reshape(self.num_envs)
        self._lengths += 1
        terminated, truncated = np.asarray(ts.terminated, bool), np.asarray(ts.truncated, bool)
        done = terminated | truncated
        if not done.any():  # most steps: no counter is handed out anew, the step types and discounts are constants
            return self._timestep(*self._quiet, ts, reached, self._not_done)
        kind = np.full(self.num_envs, stoa.StepType.MID, np.int8)
        kind[truncated], kind[terminated] = stoa.StepType.TRUNCATED, stoa.StepType.TERMINATED
        self._last = (
            _read_only(np.where(done, self._returns, self._last[0])),
            _read_only(np.where(done, self._lengths, self._last[1])),
        )
        self._returns[done], self._lengths[done] = 0, 0
        discount = np.where(terminated, 0.0, 1.0).astype(np.float32)
        return self._timestep(kind, discount, ts, reached, _read_only(done))

    def _timestep(self, kind: np.ndarray, discount: np.ndarray, ts: Any, reached: Any, done: np.ndarray) -> Any:
        metrics = {"episode_return": self._last[0], "episode_length": self._last[1], "is_terminal_step": done}
        extras = {**ts.info, "next_obs": reached, "metrics": metrics}
        out = stoa.TimeStep(kind, ts.reward, discount, ts.obs, extras)
        return out if self.device is None else jax.device_put(out, self.device)

    def _on_device(self) -> Any:
        return contextlib.nullcontext() if self.device is None else jax.default_device(self.device)

    def observation_space(self) -> Any:
        """One env's observation space, as a Stoa space (``to_stoa``'s)."""
        return self._observation_space

    def action_space(self) -> Any:
        """One env's action space, as a Stoa space (``to_stoa``'s): ``num_values`` where it is discrete."""
        return self._action_space

    def __reduce__(self) -> Any:
        """Pickles as its factory's call (the contract: no running episode travels; reset it where it is loaded)."""
        return _called, (self.factory, self.num_envs)

    def __repr__(self) -> str:
        return f"SebulbaVectorEnv({self.env!r}, device={_name(self.device)!r})"


__all__ = ["SCORE", "TARGET", "SebulbaFactory", "SebulbaVectorEnv", "all_devices", "jax_device", "sebulba_factory"]
