"""Checks of the compiled programs themselves: pure XLA (``pure``), exportable (``export``), and a
refused action leaving the state usable (``refusal``).

``pure`` only lowers (``jax.jit(f).lower(...)``, no compile): it reads the StableHLO of init, reset
and step for host callbacks (``host_callbacks``). ``export`` compiles the step once more (the call
of the deserialized export; ``Options(export=False)`` turns it off for an env) and compares it with
the eager step; ``refusal`` compiles it once under ``envhub.checked``. Host backends
(``is_jax_native`` False) call the host by design: ``pure`` and ``export`` skip them, saying so.

Typed PRNG keys (``jax.random.key``) export and serialize in jax 0.10 (``export`` passes one); the
state's, TimeStep's and action's pytree classes must be registered for serialization (envhub's
``Environment.init`` does it). Serializing needs the ``flatbuffers`` package: without it the
export is called unserialized and the check, having compared the results, skips, saying so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.core.checked import checked
from envhub.core.env import STRICT, Environment
from envhub.errors import ActionError
from envhub.testing.compare import CheckFailure, CheckSkipped, require
from envhub.testing.probe import VMAP_KEYS, Probe

#: A ``custom_call`` target in lowered StableHLO text (``@name`` or ``@"name"``).
_CUSTOM_CALL = re.compile(r'custom_call\s*@"?([\w.$-]+)')
#: TPU host callbacks lower to send/recv with a host-transfer handler instead of a custom call.
_HOST_TRANSFER = re.compile(r"stablehlo\.(send|recv)\b[^\n]*_xla_host_transfer")


def host_callbacks(lowered_text: str) -> list[str]:
    """The Python host callbacks in a lowered program's text (``jax.jit(f).lower(...).as_text()``).

    ``jax.pure_callback``, ``io_callback`` and ``jax.debug.callback``/``print`` lower to a
    ``custom_call`` named like ``xla_ffi_python_cpu_callback`` (``_gpu_`` on GPUs; older jax:
    ``xla_python_cpu_callback``), or on TPU to a host send/recv; each occurrence is listed once.
    """
    found = [t for t in _CUSTOM_CALL.findall(lowered_text) if "python" in t and "callback" in t]
    found += [f"stablehlo.{m.group(1)} to the host" for m in _HOST_TRANSFER.finditer(lowered_text)]
    return found


def _jax_native(probe: Probe, check: str) -> Environment[Any, Any, Any]:
    env = probe.env
    if not env.is_jax_native:
        raise CheckSkipped(f"a host environment calls the host by design, so {check} does not apply")
    return env


def _args(probe: Probe, batch: int | None) -> dict[str, tuple[Any, ...]]:
    """Abstract arguments (``ShapeDtypeStruct``s) of init, reset and step, with a leading ``batch`` axis if set."""
    env, traced = probe.env, probe.traced_first_steps
    key = jax.eval_shape(jax.random.key, 0)
    action = jax.eval_shape(env.action_space.sample, key)
    state = traced["init"][0]
    if batch is not None:
        key, state, action = jax.tree.map(
            lambda x: jax.ShapeDtypeStruct((batch, *x.shape), x.dtype), (key, state, action)
        )
    return {"init": (key,), "reset": (key, state), "step": (key, state, action)}


def _checkable(space: spaces.Space) -> bool:
    return isinstance(space, spaces.MultiDiscrete) or (isinstance(space, spaces.Box) and space.dtype.kind == "f")


def _leaves(space: spaces.Space) -> list[spaces.Space]:
    return list(space.leaves) if isinstance(space, spaces.Tree) else [space]


def _impure(programs: list[tuple[str, Callable[..., Any], tuple[Any, ...]]]) -> str | None:
    """The first program that calls the host, named with its callbacks, else ``None``."""
    for name, fn, args in programs:
        jitted = fn if hasattr(fn, "lower") else jax.jit(fn)  # the probe's rollout: lowered from its cached trace
        found = host_callbacks(jitted.lower(*args).as_text())
        if found:
            return f"{name} calls the host ({', '.join(sorted(set(found)))})"
    return None


def check_pure(probe: Probe) -> None:
    """The programs of init, reset and step (and of jax.vmap over them) hold no host callback: pure XLA. Also
    for a host env that says so (``Options.jit_refusal="checked"``: its compiled step has no callback)."""
    env = probe.env if probe.options.jit_refusal == "checked" else _jax_native(probe, "the pure-XLA check")
    if env.validate_actions == STRICT:
        raise CheckSkipped("validate_actions='strict' adds a host callback to step by design (docs/errors.md)")
    methods: dict[str, Callable[..., Any]] = {"init": env.init, "reset": env.reset, "step": env.step}
    # One lowering each of two programs that hold them all: the probe's rollout (already traced, so
    # lowering it is almost free) and, unbatched, jax.vmap of the first steps; the culprit is then
    # named by lowering init, reset and step one by one.
    keys = (jax.random.key(0), jax.random.key(1))
    suspects: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
        ("the probe's rollout (init, step, reset, space samples)", probe.run, keys)
    ]
    if env.num_envs is None and env.is_jax_native:  # what a user gets by vmapping the env (the vmap check's program)
        vmap_keys = (jax.random.split(jax.random.key(5), VMAP_KEYS),)
        suspects.append(("jax.vmap(init, step, reset)", probe.vmapped_first_steps, vmap_keys))
    for whole, fn, args in suspects:
        if _impure([(whole, fn, args)]) is None:
            continue
        vmapped = fn is not probe.run
        batch = VMAP_KEYS if vmapped else None
        parts = [
            (f"jax.vmap({n})" if vmapped else n, jax.vmap(methods[n]) if vmapped else methods[n], a)
            for n, a in _args(probe, batch).items()
        ]
        culprit = _impure(parts) or _impure([(whole, fn, args)])
        raise CheckFailure(
            f"the program of {culprit}; a JAX-native env's init, reset and step must be pure XLA (no host callback: docs/performance.md's compilation cache)"
        )
    if env.is_jax_native and any(_checkable(s) for s in _leaves(env.action_space)):
        # The opt-in hard stop must be seen: proves host_callbacks reads this program's lowering.
        # a new function, so jit traces it afresh (the env's own step may be in jit's cache already)
        args, before = _args(probe, None)["step"], env.validate_actions
        env.validate_actions = STRICT
        try:
            text = jax.jit(lambda k, s, a: env.step(k, s, a)).lower(*args).as_text()
        finally:
            env.validate_actions = before
        require(
            host_callbacks(text),
            "validate_actions='strict' put no host callback in step: step ignores "
            "validate_actions, or host_callbacks cannot read this program's lowering (so it could miss one)",
        )


def _comparable(tree: Any) -> list[np.ndarray]:
    """Host copies of a pytree's leaves, typed PRNG keys as their key data."""
    leaves = jax.tree.leaves(tree)
    return [np.asarray(jax.random.key_data(x) if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x) for x in leaves]


def _differences(a: Any, b: Any, atol: float) -> int:
    """How many leaves of two pytrees differ: exactly, floats beyond ``atol`` (NaN equals NaN); all if structures differ."""
    structure: Any = jax.tree.structure(a)
    if structure != jax.tree.structure(b):
        return max(len(jax.tree.leaves(a)), 1)
    off = 0
    for x, y in zip(_comparable(a), _comparable(b)):
        if x.shape != y.shape or x.dtype != y.dtype:
            off += 1
        elif not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            off += not (x.dtype.kind == "f" and np.allclose(x, y, atol=atol, equal_nan=True))
    return off


def check_export(probe: Probe) -> None:
    """jax.export of the jitted step serializes and deserializes, and its call gives what env.step gives."""
    if not probe.env.is_jax_native and probe.options.jit_refusal == "checked":
        raise CheckSkipped(
            "a host environment's programs name this process's live environments: jax.export does not apply"
        )
    env = _jax_native(probe, "jax.export (a host callback cannot be exported)")
    if not probe.options.export:
        raise CheckSkipped("Options(export=False): the plugin turned the export check off for this env")
    key = jax.random.key(4)
    state, _ = env.init(key)
    args = (key, state, env.action_space.sample(key))
    try:
        exported = jax.export.export(jax.jit(env.step))(*args)
    except Exception as exc:  # noqa: BLE001 - a refusal to export is the violation to report
        raise CheckFailure(f"jax.export refused the step: {type(exc).__name__}: {exc}") from None
    missing = ""
    try:
        exported = jax.export.deserialize(exported.serialize())
    except ImportError as exc:  # jax's serialization needs the optional flatbuffers package
        missing = str(exc)
    except Exception as exc:  # noqa: BLE001
        hint = ""
        if "ErrorEffect" in str(exc):
            hint = (
                " (the program carries checkify's ErrorEffect, from a checkify.debug_check traced "
                "outside checkify: it exports but cannot be serialized)"
            )
        elif "unregistered type" in str(exc):
            hint = (
                " (a pytree class of the state, TimeStep or action is not registered with "
                "jax.export.register_pytree_node_serialization)"
            )
        raise CheckFailure(f"the exported step does not serialize{hint}: {type(exc).__name__}: {exc}") from None
    # The reference is the eager step (compiled op by op, already by the jit check): one compile fewer.
    off = _differences(exported.call(*args), env.step(*args), probe.options.atol)
    require(off == 0, f"{off} leaves of the exported step's output differ from env.step's (atol={probe.options.atol})")
    if missing:
        raise CheckSkipped(
            f"exported and called the step (it matches env.step), but serialization was not tested: {missing}"
        )


def invalid_action(space: spaces.Space, good: Any) -> Any | None:
    """``good`` with its first checkable leaf made invalid (one past a discrete range; NaN in a float
    Box), or ``None`` when no leaf of ``space`` has a value that can be invalid."""
    subs = _leaves(space)
    leaves = space.treedef.flatten_up_to(good) if isinstance(space, spaces.Tree) else [good]
    for i, sub in enumerate(subs):
        if not _checkable(sub):
            continue
        x = np.asarray(leaves[i])
        if isinstance(sub, spaces.MultiDiscrete):
            bad = np.broadcast_to(sub.start + sub.nvec, x.shape).astype(x.dtype)
        else:
            bad = np.full(x.shape, np.nan, x.dtype)
        leaves = [*leaves[:i], jnp.asarray(bad), *leaves[i + 1 :]]
        return space.treedef.unflatten(leaves) if isinstance(space, spaces.Tree) else leaves[0]
    return None


def _refuses(step: Callable[..., Any], args: tuple[Any, ...], how: str) -> None:
    try:
        jax.block_until_ready(step(*args))
    except Exception as exc:  # noqa: BLE001 - inspected below: a host callback's error arrives wrapped
        require(
            ActionError.PREFIX in str(exc),
            f"{how}: an invalid action raised {type(exc).__name__} without envhub's {ActionError.PREFIX!r} text: {exc}",
        )
        require(
            isinstance(exc, ActionError) or how.startswith("jax.jit"),
            f"{how}: an invalid action raised {type(exc).__name__}, not ActionError: {exc}",
        )
        return
    raise CheckFailure(f"{how}: an invalid action was accepted")


def check_refusal(probe: Probe) -> None:
    """An invalid action value raises ActionError (eagerly; in jit under envhub.checked, or the host
    callback of a host env), and the same state then steps as if the refusal never happened."""
    env, options = probe.env, probe.options
    if not env.validate_actions:
        raise CheckSkipped("validate_actions=False: action values are not checked, by the caller's choice")
    key = jax.random.key(6)
    good = env.action_space.sample(key)
    bad = invalid_action(env.action_space, good)
    if bad is None:
        raise CheckSkipped(
            f"no value of the action space {env.action_space!r} can be invalid (no discrete or float leaf)"
        )
    native, strict = env.is_jax_native, env.validate_actions == STRICT
    if native:
        # A pure env's state is immutable: what must hold is that both paths refuse and that the state
        # passed in is still alive (nothing donated) and steps as before. The refusing program itself,
        # with a valid action, is the reference: one compile (eager steps would run op by op).
        def traced_afresh(k: jax.Array, s: Any, a: Any) -> Any:  # a new function: not in jit's cache
            return env.step(k, s, a)

        compiled = jax.jit(traced_afresh) if strict else checked(traced_afresh)
        how = "jax.jit(env.step), strict" if strict else "envhub.checked(env.step)"
        state = env.init(key)[0]
        reference = compiled(key, state, good)
        for name, step in (("eager env.step", env.step), (how, compiled)):
            _refuses(step, (key, state, bad), name)
            try:
                after = compiled(key, state, good)
            except Exception as exc:  # noqa: BLE001 - e.g. "Array has been deleted": donated to the refused call
                message = f"{name}: after a refused action, the state passed in cannot step again: {exc}"
                raise CheckFailure(message) from None
            off = _differences(after, reference, options.atol)
            require(off == 0, f"{name}: after a refused action, the same state steps differently ({off} leaves)")
        return
    in_jit = (
        ("jax.jit(env.step) of a host env", jax.jit)
        if options.jit_refusal == "raise"
        else ("envhub.checked(env.step) of a host env", checked)
    )
    for name, step in (("eager env.step", env.step), (in_jit[0], in_jit[1](env.step))):
        # a host env's reference: a fresh env that never saw the refusal (its state holds its own handles)
        other = probe.fresh()
        reference = (other.step if step is env.step else in_jit[1](other.step))(key, other.init(key)[0], good)[1]
        state = env.init(key)[0]
        _refuses(step, (key, state, bad), name)
        after = step(key, state, good)
        off = _differences(after[1], reference, options.atol)
        require(
            off == 0,
            f"{name}: after a refused action, stepping the same state with a valid action "
            f"differs from a run that never saw the refusal ({off} leaves)",
        )


__all__ = ["check_export", "check_pure", "check_refusal", "host_callbacks", "invalid_action"]
