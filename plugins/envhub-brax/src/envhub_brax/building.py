"""Building a brax environment: argument checks, the default physics pipeline, and swimmer's fluid fix."""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import sys
import threading
from collections.abc import Iterator
from typing import Any, Literal

from envhub.plugin import Kwarg, from_signature, jax_kwargs, positive_int, use_egl_when_headless
from envhub_brax.quiet import mujoco_notices_dropped, prints_dropped, quiet

BACKENDS = ("mjx", "generalized", "positional", "spring")
DEFAULT_BACKEND = "mjx"  # the fastest pipeline on CPU (ant, 64 envs: about 3x generalized)
RESET_MODES = ("real", "cached")
# The pipelines brax 0.14's constructors accept where not all of them: swimmer raises on any but
# generalized; fast has no physics at all (its constructor ignores `backend`).
ONLY_BACKENDS: dict[str, tuple[str, ...]] = {"swimmer": ("generalized",), "fast": ()}


DEFAULT_LIMIT = 1000  # brax's training default episode length


def import_brax_envs() -> Any:
    """Import ``brax.envs``; what it prints goes to stderr, keeping stdout clean, less ``quiet.PRINTED_NOTICES``.

    MuJoCo picks its OpenGL platform when first imported: without a display, EGL (unless ``MUJOCO_GL`` is set).
    """
    use_egl_when_headless()
    with prints_dropped(), quiet():
        from brax import envs
    return envs


def default_backend(name: str) -> str | None:
    """``mjx`` where brax's ``name`` supports it, else its only pipeline (``None``: no physics)."""
    only = ONLY_BACKENDS.get(name)
    if only is None:
        return DEFAULT_BACKEND
    return only[0] if only else None


def check_arguments(
    name: str,
    backend: str | None,
    episode_length: int | None,
    reset_mode: str,
    reset_spares: bool | None,
    num_envs: int | None,
    kwargs: dict[str, Any],
) -> None:
    """Raise ``InvalidArgumentError`` naming the bad value and the fix."""
    from envhub.plugin import InvalidArgumentError

    if backend is not None and backend not in BACKENDS:
        raise InvalidArgumentError(f"backend={backend!r} for brax/{name}: use one of {BACKENDS} (or omit it).")
    only = ONLY_BACKENDS.get(name)
    if backend is not None and only is not None and backend not in only:
        fix = f"pass backend={only[0]!r} or omit it" if only else "omit it: it has no physics pipeline"
        raise InvalidArgumentError(f"backend={backend!r} for brax/{name}: brax supports only {only}; {fix}.")
    positive_int(
        "max_episode_steps", episode_length, none="no time limit", where=f"(brax's episode_length) for brax/{name}"
    )
    if reset_mode not in RESET_MODES:
        raise InvalidArgumentError(f"reset_mode={reset_mode!r} for brax/{name}: use one of {RESET_MODES}.")
    if reset_spares is not None:
        if not isinstance(reset_spares, bool):
            raise InvalidArgumentError(f"reset_spares={reset_spares!r} for brax/{name}: pass True or False.")
        if reset_spares and (num_envs is None or reset_mode != "real"):
            raise InvalidArgumentError(
                f"reset_spares=True for brax/{name} applies to num_envs=N with reset_mode='real' only "
                f"(got num_envs={num_envs!r}, reset_mode={reset_mode!r}): omit it."
            )
    if "action_repeat" in kwargs:
        raise InvalidArgumentError(
            f"action_repeat={kwargs['action_repeat']!r} for brax/{name}: envhub-brax does not take it; "
            "wrap the environment in envhub.wrappers.ActionRepeat instead."
        )


def declared_kwargs(name: str) -> dict[str, Kwarg]:
    """What ``make("brax/<name>", ...)`` accepts: the env class's constructor (and its bases') arguments, the
    pipeline, the time limit (brax's ``episode_length`` an alias) and the JAX base's reset kwargs."""

    only = ONLY_BACKENDS.get(name, BACKENDS)
    doc = f"brax's physics pipeline (None: {default_backend(name)})"
    backend = Kwarg(Literal[only] | None, None, doc) if only else Kwarg(refused="it has no physics pipeline: omit it")  # type: ignore[valid-type]
    repeat = "envhub-brax does not take it; wrap the environment in envhub.wrappers.ActionRepeat instead"
    table = from_signature(import_brax_envs()._envs[name], skip=("sys", "backend", "action_repeat"))[0]
    if "n_frames" in table:  # physics steps per env step: 0 or less and the env never moves (brax does not check)
        table["n_frames"] = dataclasses.replace(table["n_frames"], bounds=(1, None))
    return {
        **table,
        "backend": backend,
        **jax_kwargs(DEFAULT_LIMIT, native="episode_length"),
        "action_repeat": Kwarg(refused=repeat),
    }


def build(envs: Any, name: str, backend: str | None, kwargs: dict[str, Any]) -> Any:
    """``envs.get_environment(name, **kwargs)`` with ``backend`` (default: ``default_backend(name)``)."""
    backend = backend or default_backend(name)
    if backend is not None:
        kwargs = {**kwargs, "backend": backend}
    cls = envs._envs[name]  # brax's registry, what get_environment reads
    if _clip_lost_a_min():
        cls = type(cls.__name__, (_FluidClipFix, cls), {"__module__": cls.__module__})
    with contextlib.redirect_stdout(sys.stderr), quiet(), mujoco_notices_dropped():  # MuJoCo compiles the model
        return cls(**kwargs)


def _clip_lost_a_min() -> bool:
    import jax.numpy as jnp

    return "a_min" not in inspect.signature(jnp.clip).parameters


class _NumpyWithClipAMin:
    """``jax.numpy``, whose ``clip`` also takes the ``a_min``/``a_max`` keywords newer jax removed."""

    def __init__(self, jnp: Any):
        self._jnp = jnp

    def __getattr__(self, name: str) -> Any:
        return getattr(self._jnp, name)

    def clip(self, x: Any, min: Any = None, max: Any = None, *, a_min: Any = None, a_max: Any = None) -> Any:
        return self._jnp.clip(x, a_min if min is None else min, a_max if max is None else max)


_FLUID_LOCK = threading.RLock()


@contextlib.contextmanager
def _fluid_clip_accepts_a_min() -> Iterator[None]:
    from brax import fluid

    # brax 0.14's fluid.force calls jnp.clip(a_min=...), which jax >= 0.7 rejects: while brax's physics
    # is traced, brax.fluid sees a jax.numpy whose clip takes it; restored at once, never written to disk.
    with _FLUID_LOCK:
        saved, fluid.jp = fluid.jp, _NumpyWithClipAMin(fluid.jp)
        try:
            yield
        finally:
            fluid.jp = saved


class _FluidClipFix:
    """Mixed into a brax env class: its pipeline is traced under ``_fluid_clip_accepts_a_min`` when it has fluid."""

    sys: Any

    def pipeline_init(self, *args: Any, **kwargs: Any) -> Any:
        with self._fluid_fix():
            return super().pipeline_init(*args, **kwargs)  # type: ignore[misc]

    def pipeline_step(self, *args: Any, **kwargs: Any) -> Any:
        with self._fluid_fix():
            return super().pipeline_step(*args, **kwargs)  # type: ignore[misc]

    def _fluid_fix(self) -> contextlib.AbstractContextManager[None]:
        fluid = getattr(getattr(self, "sys", None), "enable_fluid", False)
        return _fluid_clip_accepts_a_min() if fluid else contextlib.nullcontext()
