"""``AleEnvironment``: ALE's own vector env (``ale_py.vector_env.AtariVectorEnv``) behind the envhub API, stepped
through its XLA FFI calls (``envhub_ale.xla``): no Python callback in ``init``, ``reset`` or ``step``.

One ``AtariVectorEnv`` of ``num_envs`` emulators per environment object, made at construction. The state is
its handle and a version: the environment keeps the newest version in a JAX Ref that compiled calls read
and write, so an older state (or another environment's) is refused instead of stepping emulators that have
moved on. Every ``init`` (eager or traced) reseeds all emulators from its key and starts a new version.

Same-step auto-reset: after ALE's step, the envs that ended are reset by ALE's own partial reset in the same
program (their emulators continue their own random streams: reseeding an emulator reloads its game, ~45 ms),
``final_obs`` is the step's observation.

Refusals (a stale state, an action outside the action set, which would hang ALE's threads): eagerly envhub's
errors; inside ``jit`` no emulator runs, the rewards are NaN and the state returned cannot step (``_guarded``),
and ``envhub.checked`` raises them. The newest state stays current either way. With ``validate_actions="strict"``
an invalid action is also a hard stop inside ``jit`` (``_strict_stop``: a host callback, as the core's strict mode).
``jax.export`` of a program holding an env's calls raises ``InvalidArgumentError`` (``xla.not_exported``).
Code stepping the env from Python (the Sebulba factory) gets ALE's own send/recv on emulators of its own:
``env.host_loop()`` (``envhub_ale.loop``).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import weakref
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.plugin import (
    Environment,
    HostVmapError,
    TimeStep,
    checks_values_on_host,
    spaces,
)
from envhub_ale import xla
from envhub_ale.guards import Guards, fresh_base
from envhub_ale.loop import AleLoop

# What gymnasium's ALE/<Game>-v5 means, as AtariVectorEnv arguments (its defaults are DQN's preprocessing).
V5 = {
    "frameskip": 4,
    "repeat_action_probability": 0.25,
    "full_action_space": False,
    "img_height": 210,
    "img_width": 160,
    "grayscale": False,
    "stack_num": 1,
    "maxpool": False,
    "noop_max": 0,
    "use_fire_reset": False,
    "reward_clipping": False,
    "episodic_life": False,
}


@dataclasses.dataclass(frozen=True)
class AleState:
    """The handle of the environment's emulators (ALE's, 8 bytes) and which of its states this is."""

    handle: jax.Array
    version: jax.Array  # int32; the environment's Ref holds the newest
    elapsed: jax.Array  # int32, per env: steps of its episode so far (envhub's time limit)


jax.tree_util.register_dataclass(AleState, data_fields=["handle", "version", "elapsed"], meta_fields=[])


class AleEnvironment(Guards, Environment[AleState, Any, Any]):
    """ALE's own C++ vector env of ``num_envs`` emulators (or one), stepped through ALE's XLA FFI calls with no Python
    callback; same-step resets by ALE's partial reset. ``game`` is ALE's snake_case ROM id; see the module docstring."""

    is_jax_native = False  # the emulators live in this process: no vmap over states, states are used once
    render_modes = ("rgb_array",)

    def __init__(self, game: str, num_envs: int | None = None, *, max_episode_steps: int, **kwargs: Any):
        self.game, self.num_envs, self.kwargs = game, num_envs, {**V5, **kwargs}
        self.max_episode_steps = max_episode_steps
        self._n = 1 if num_envs is None else num_envs
        self._vector = self._new_vector()
        self._loops: weakref.WeakSet[AleLoop] = weakref.WeakSet()  # host_loop()'s, each with emulators of its own
        handle, _, _ = self._vector.xla()  # registers ALE's FFI targets
        self._calls = xla.Calls(self._n, self._vector.observation_space.shape)
        self._obs_shape = self._vector.single_observation_space.shape[self.kwargs["stack_num"] == 1 :]
        self._single_action = spaces.Discrete(int(self._vector.single_action_space.n), dtype=np.int32)
        self._own_handle = np.asarray(handle)
        # Read and written by every compiled call: the handle, and the newest state's version (< 0: none is current).
        self._handle, self._newest = jax.new_ref(handle), jax.new_ref(jnp.int32(-fresh_base()))

    # --- spaces and metadata -------------------------------------------------------------------

    @property
    def single_observation_space(self) -> spaces.Space:
        return spaces.Box(0, 255, self._obs_shape, np.uint8)

    @property
    def single_action_space(self) -> spaces.Space:
        return self._single_action

    @property
    def observation_space(self) -> spaces.Space:
        one = self.single_observation_space
        return one if self.num_envs is None else one.batch(self.num_envs)

    @property
    def action_space(self) -> spaces.Space:
        one = self.single_action_space
        return one if self.num_envs is None else one.batch(self.num_envs)

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            "runs_on": "host (CPU: ALE's C++ threads, stepped through ALE's XLA FFI calls, no Python callback)",
            "autoreset": "same-step (ALE's partial reset of the ended emulators, in the same XLA program)",
            "time_limit": self.max_episode_steps,
            "ale": {k: self.kwargs[k] for k in sorted(self.kwargs)},
            "library": f"ale-py {importlib.metadata.version('ale-py')} ({self.game})",
        }

    def _new_vector(self, **more: Any) -> Any:
        """A new ``AtariVectorEnv`` of this env's game and settings (and ``more`` of its arguments)."""
        from ale_py.vector_env import AtariVectorEnv

        # envhub truncates, counting steps: at ALE's own limit its vector env (0.12.1) returns the frame before
        # the step, not the one reached (measured: tests/test_ale.py::test_ale_truncation_repeats_a_frame).
        limit = 2**31 - 1
        return AtariVectorEnv(self.game, num_envs=self._n, max_num_frames_per_episode=limit, **self.kwargs, **more)

    def _host_loop(self) -> AleLoop:
        """Stepped from Python (``envhub_ale.loop``): ALE's send/recv on emulators of the loop's own."""
        loop = AleLoop(self)
        self._loops.add(loop)
        return loop

    def _close(self) -> None:
        # The emulators stay until this object is collected: a compiled step may still hold their handle, and
        # its guard (no version is current now) must reach ALE to refuse it. Host loops' emulators go now.
        self._revived()[...] = jnp.int32(-fresh_base())
        for loop in list(self._loops):
            loop.release()

    # --- init, reset, step ---------------------------------------------------------------------

    def _init(self, key: jax.Array) -> tuple[AleState, TimeStep[Any]]:
        self._refuse_vmap(key, "init")
        if not _traced(key):
            return self._compiled("init")(key)
        newest_ref = self._revived()
        newest = newest_ref[...]
        version = jnp.where(newest >= 0, newest + 1, -newest) & 0x7FFFFFFF  # never one a state had
        handle = xla.not_exported(self._handle[...], self.id)
        handle, out = self._calls.reset(handle, jnp.arange(self._n, dtype=jnp.int32), xla.seeds_for(key, self._n))
        newest_ref[...] = version
        return AleState(handle, version, jnp.zeros(self._env_shape(), jnp.int32)), self._first(out)

    def _reset(self, key: jax.Array, state: AleState) -> tuple[AleState, TimeStep[Any]]:
        return self._reset_where(key, state, jnp.ones(self._env_shape(), jnp.bool_))

    def _reset_where(self, key: jax.Array, state: AleState, where: jax.Array) -> tuple[AleState, TimeStep[Any]]:
        self._refuse_vmap(state.version, "reset")
        if not _traced(key, state, where):
            self._check_eagerly(state, "reset")
            return self._compiled("reset_where")(key, state, where)
        mask = jnp.reshape(jnp.broadcast_to(where, self._env_shape()), (self._n,))
        seeds = xla.seeds_for(key, self._n)

        def reset(handle: jax.Array) -> tuple[jax.Array, xla.Out]:
            return self._calls.reset_where(*self._calls.read(handle), mask, seeds)

        handle, out, version = self._guarded(state, "reset", jnp.bool_(True), None, reset)
        elapsed = jnp.where(jnp.reshape(mask, self._env_shape()), 0, state.elapsed)
        return AleState(handle, version, elapsed), self._first(out)

    def _step(self, key: jax.Array, state: AleState, action: Any) -> tuple[AleState, TimeStep[Any]]:
        self._refuse_vmap(state.version, "step")
        if self.validate_actions == "strict" and checks_values_on_host(self) and _traced(action):
            action = self._strict_stop(action)
        action = jnp.reshape(jnp.asarray(action), (self._n,)).astype(jnp.int32)
        valid = jnp.all((action >= 0) & (action < self._single_action.n))
        if not _traced(key, state, action):
            self._check_eagerly(state, "step", valid, action)
            return self._compiled("step")(key, state, action)

        elapsed = jnp.reshape(state.elapsed, (self._n,)) + 1

        def step(handle: jax.Array) -> tuple[jax.Array, tuple[xla.Out, xla.Out]]:
            handle, stepped = self._calls.step(handle, action)
            stepped = stepped._replace(truncated=(elapsed >= self.max_episode_steps) & ~stepped.terminated)
            done = stepped.terminated | stepped.truncated
            seeds = jnp.full((self._n,), -1, jnp.int32)  # the ended emulators continue their own random streams

            def reset_ended() -> tuple[jax.Array, xla.Out]:  # only on a step where some episode ended
                new_handle, reset = self._calls.reset_where(handle, stepped, done, seeds)
                pick = lambda a, b: jnp.where(done.reshape((-1,) + (1,) * (a.ndim - 1)), a, b)  # noqa: E731
                return new_handle, jax.tree.map(pick, reset, stepped)

            handle, now = jax.lax.cond(done.any(), reset_ended, lambda: (handle, stepped))
            return handle, (now, stepped)

        handle, (now, stepped), version = self._guarded(state, "step", valid, action, step)
        ts = TimeStep.transition(
            obs=self._obs(now.obs),
            reward=self._shaped(jnp.where(stepped.lives < -1, jnp.nan, stepped.reward.astype(jnp.float32))),
            terminated=self._shaped(stepped.terminated),
            truncated=self._shaped(stepped.truncated),
            final_obs=self._obs(stepped.obs),
            info=self._info(now),
        )
        elapsed = jnp.where(ts.done, 0, jnp.where(version >= 0, self._shaped(elapsed), state.elapsed))
        return AleState(handle, version, elapsed), ts

    # --- the guard ---------------------------------------------------------------------------

    def _compiled(self, method: str) -> Any:
        """``jax.jit`` of a method, for eager calls (op by op, a step would dispatch ~100 small programs)."""
        cache = self.__dict__.setdefault("_jitted", {})
        if method not in cache:
            cache[method] = jax.jit(getattr(self, f"_{method}"))
        return cache[method]

    def _read(self, handle: jax.Array) -> tuple[jax.Array, xla.Out]:
        return self._calls.read(handle)

    def _refuse_vmap(self, x: Any, op: str) -> None:
        if isinstance(x, jax.core.Tracer) and type(x).__name__ == "BatchTracer":
            raise HostVmapError(
                self.id,
                f"jax.vmap over {op}() of ALE emulators, which follow one trajectory each; "
                f"make the env with num_envs=N instead",
            )

    # --- shaping -----------------------------------------------------------------------------

    def _env_shape(self) -> tuple[int, ...]:
        return () if self.num_envs is None else (self.num_envs,)

    def _shaped(self, x: jax.Array) -> jax.Array:
        return x.reshape(self._env_shape())

    def _obs(self, obs: jax.Array) -> jax.Array:
        return obs.reshape(self._env_shape() + tuple(self._obs_shape))

    def _info(self, out: xla.Out) -> dict[str, Any]:
        return {"lives": self._shaped(out.lives), "episode_frame_number": self._shaped(out.episode_frame_number)}

    def _first(self, out: xla.Out) -> TimeStep[Any]:
        return TimeStep.first(self._obs(out.obs), self._info(out), self._env_shape())

    # --- render --------------------------------------------------------------------------------

    def _render(self, state: AleState, index: int | None) -> Any:
        self._check_eagerly(state, "render")
        frames = np.asarray(self._compiled("read")(state.handle)[1].obs)[:, -1]  # each emulator's newest frame
        frames = frames if frames.ndim == 4 else np.repeat(frames[..., None], 3, axis=-1)
        return frames[index] if index is not None else (frames[0] if self.num_envs is None else frames)


def _traced(*xs: Any) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in xs)
