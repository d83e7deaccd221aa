"""The conformance kit: the checks every envhub backend must pass.

A plugin applies it in a few lines, either as a pytest base class::

    class TestCartPole(envhub.testing.ConformanceTests):
        env_id = "gymnax/CartPole-v1"
        time_limit_kwarg = "max_steps_in_episode"

or one check at a time (``run_check(name, make_env, options)``), or all at once
(``check_env(make_env, options)`` raises ``AssertionError`` with a readable report).
``make_env(**kwargs)`` must return a *fresh* environment each call.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub import spaces
from envhub.env import Environment
from envhub.errors import ActionError, ClosedEnvironmentError
from envhub.types import TimeStep

MakeEnv = Callable[..., Environment[Any, Any, Any]]


@dataclasses.dataclass(frozen=True)
class Options:
    """How the kit exercises one environment.

    Attributes:
        num_steps: Steps per rollout in the auto-reset check (more if episodes are long).
        time_limit_kwarg: The ``make`` kwarg that sets the time limit (gymnax:
            ``max_steps_in_episode``, gymnasium: ``max_episode_steps``); ``None`` if there is none.
        time_limit: The short limit the truncation checks set through ``time_limit_kwarg``.
        keys_matter: ``False`` for environments whose trajectory does not depend on the key.
        reset_obs_can_repeat: ``True`` when a new episode's first obs can equal the previous
            episode's last (e.g. a bandit whose observation never changes).
        obs_depend_on_time_limit: ``True`` when observations encode the time limit (e.g. a
            normalised clock), so the truncation check cannot compare runs with two limits.
        atol: Tolerance when comparing floats between jitted and eager runs.
    """

    num_steps: int = 200
    time_limit_kwarg: str | None = None
    time_limit: int = 7
    keys_matter: bool = True
    reset_obs_can_repeat: bool = False
    obs_depend_on_time_limit: bool = False
    atol: float = 1e-5


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The outcome of one check."""

    name: str
    passed: bool
    message: str
    seconds: float


class CheckFailure(AssertionError):
    """A conformance check found a violation of the envhub contract."""


def _require(condition: Any, message: str) -> None:
    if not bool(condition):
        raise CheckFailure(message)


# --- helpers ---------------------------------------------------------------------------------


def _random_actions(env: Environment[Any, Any, Any], key: jax.Array) -> Any:
    return env.action_space.sample(key)


def rollout_fn(
    env: Environment[Any, Any, Any], num_steps: int, *, jit: bool = True
) -> Callable[..., tuple[TimeStep[Any], TimeStep[Any]]]:
    """Return ``run(key, action_key=None)``: init, then ``num_steps`` steps with random actions.

    It returns the first TimeStep and the stacked step TimeSteps. Actions come from ``action_key``
    when given (so only the environment's keys vary with ``key``), else from ``key``. The jitted
    version compiles once per env and can be called with many keys.
    """

    def body(state: Any, keys: tuple[jax.Array, jax.Array]) -> tuple[Any, TimeStep[Any]]:
        env_key, action_key = keys
        return env.step(env_key, state, _random_actions(env, action_key))

    def keys_for(key: jax.Array, action_key: jax.Array | None) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
        init_key, run_key, own_action_key = jax.random.split(key, 3)
        action_key = own_action_key if action_key is None else action_key
        return init_key, (jax.random.split(run_key, num_steps), jax.random.split(action_key, num_steps))

    def scanned(key: jax.Array, action_key: jax.Array | None = None) -> tuple[TimeStep[Any], TimeStep[Any]]:
        init_key, step_keys = keys_for(key, action_key)
        state, first = env.init(init_key)
        _, steps = jax.lax.scan(body, state, step_keys)
        return first, steps

    def looped(key: jax.Array, action_key: jax.Array | None = None) -> tuple[TimeStep[Any], TimeStep[Any]]:
        init_key, (env_keys, action_keys) = keys_for(key, action_key)
        state, first = env.init(init_key)
        outs = []
        for keys in zip(env_keys, action_keys):
            state, ts = body(state, keys)
            outs.append(ts)
        return first, jax.tree.map(lambda *xs: jnp.stack(xs), *outs)

    return jax.jit(scanned) if jit else looped


def rollout(
    env: Environment[Any, Any, Any], key: jax.Array, num_steps: int, *, jit: bool = True
) -> tuple[TimeStep[Any], TimeStep[Any]]:
    """Init then step ``num_steps`` times with random actions; return the first and stacked TimeSteps."""
    return rollout_fn(env, num_steps, jit=jit)(key)


def _avals(tree: Any) -> list[tuple[str, tuple[int, ...], str, bool]]:
    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    return [
        (jax.tree_util.keystr(p), tuple(x.shape), str(x.dtype), bool(getattr(x, "weak_type", False))) for p, x in leaves
    ]


def _same_structure(a: Any, b: Any, what: str) -> None:
    ta: Any = jax.tree.structure(a)
    tb: Any = jax.tree.structure(b)
    _require(ta == tb, f"{what}: pytree structures differ:\n  {ta}\n  {tb}")
    for la, lb in zip(_avals(a), _avals(b)):
        _require(la == lb, f"{what}: leaf {la[0]} differs: shape/dtype/weak_type {la[1:]} vs {lb[1:]}")


def _trees_close(a: Any, b: Any, atol: float) -> bool:
    structure: Any = jax.tree.structure(a)
    if structure != jax.tree.structure(b):
        return False
    return all(
        np.allclose(np.asarray(x, np.float64), np.asarray(y, np.float64), atol=atol, equal_nan=True)
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b))
    )


def _batch_shape(env: Environment[Any, Any, Any]) -> tuple[int, ...]:
    return () if env.num_envs is None else (env.num_envs,)


def _leaf_equal(a: Any, b: Any, batch_ndim: int) -> np.ndarray:
    """Per-transition equality of two pytrees whose leaves lead with (time, *batch)."""
    eq = None
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        axes = tuple(range(1 + batch_ndim, x.ndim))
        same = np.all((x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else x == y, axis=axes)
        eq = same if eq is None else eq & same
    assert eq is not None
    return eq


@contextmanager
def _closing(env: Environment[Any, Any, Any]) -> Iterator[Environment[Any, Any, Any]]:
    try:
        yield env
    finally:
        env.close()


def _contains_each(space: spaces.Space, stacked: Any, lead: int) -> bool:
    """Whether every element of ``stacked`` (leaves with ``lead`` extra leading axes) is in ``space``."""
    flat = jax.tree.map(lambda x: np.asarray(x).reshape((-1, *np.shape(x)[lead:])), stacked)
    return bool(jnp.all(jax.vmap(space.contains)(flat)))


# --- the checks --------------------------------------------------------------------------------


def check_spaces(make_env: MakeEnv, options: Options) -> None:
    """Spaces are envhub spaces, samples lie inside them, and batched spaces lead with num_envs."""
    with _closing(make_env()) as env:
        names = ["action_space", "observation_space"]
        if env.num_envs is not None:
            names += ["single_action_space", "single_observation_space"]
        for name in names:
            space = getattr(env, name)
            _require(isinstance(space, spaces.Space), f"env.{name} is {space!r}, not an envhub.spaces.Space")
            sample, inside = jax.jit(lambda k, s=space: (s.sample(k), s.contains(s.sample(k))))(jax.random.key(1))
            _require(inside, f"env.{name}.sample() gave {sample!r}, which it does not contain")
        if env.num_envs is not None:
            for leaf in jax.tree.leaves(env.action_space.sample(jax.random.key(0))):
                _require(leaf.shape[:1] == (env.num_envs,), f"batched action leaf shape {leaf.shape} lacks num_envs")


def check_init(make_env: MakeEnv, options: Options) -> None:
    """init gives obs in the space, float32 zero reward, false bool flags, final_obs == obs."""
    with _closing(make_env()) as env:
        state, ts = env.init(jax.random.key(0))
        _require(isinstance(ts, TimeStep), f"init returned {type(ts).__name__}, not envhub.TimeStep")
        batch = _batch_shape(env)
        _require(
            jnp.asarray(ts.reward).dtype == jnp.float32 and jnp.shape(ts.reward) == batch,
            f"reward must be float32 of shape {batch}, got {jnp.asarray(ts.reward).dtype} {jnp.shape(ts.reward)}",
        )
        for flag in ("terminated", "truncated"):
            value = jnp.asarray(getattr(ts, flag))
            _require(
                value.dtype == jnp.bool_ and value.shape == batch,
                f"{flag} must be bool of shape {batch}, got {value.dtype} {value.shape}",
            )
            _require(not bool(jnp.any(value)), f"{flag} is set right after init")
        _require(env.observation_space.contains(ts.obs), f"init obs {ts.obs!r} is not in {env.observation_space!r}")
        _require(_trees_close(ts.final_obs, ts.obs, 0.0), "after init, final_obs must equal obs")
        _require(isinstance(ts.info, dict), f"info must be a dict, got {type(ts.info).__name__}")


def check_structure(make_env: MakeEnv, options: Options) -> None:
    """(state, ts) have one pytree structure, shapes, dtypes and weak types from init, reset and step."""
    with _closing(make_env()) as env:
        key = jax.random.key(0)
        state, ts = env.init(key)
        action = env.action_space.sample(key)
        after_init = (state, ts)
        after_step = env.step(key, state, action)
        after_reset = env.reset(key, after_step[0])
        _same_structure(after_init, after_step, "init vs step")
        _same_structure(after_init, after_reset, "init vs reset")


def check_jit(make_env: MakeEnv, options: Options) -> None:
    """A jitted scan rollout gives what an eager Python loop gives, for the same keys."""
    key = jax.random.key(3)
    with _closing(make_env()) as env:
        eager = rollout(env, key, 12, jit=False)
    with _closing(make_env()) as env:
        jitted = rollout(env, key, 12, jit=True)
    _require(
        _trees_close(eager, jitted, options.atol), "jit(scan) rollout differs from the eager loop with the same keys"
    )


def check_vmap(make_env: MakeEnv, options: Options) -> None:
    """jax.vmap over an unbatched env matches per-key runs, or (host envs) raises naming num_envs."""
    with _closing(make_env()) as env:
        if env.num_envs is not None:
            return  # batched environments are vmapped inside already; vmapping them again is the user's choice
        keys = jax.random.split(jax.random.key(5), 3)

        # A fresh function per env: jax.jit reuses the trace of the same function object, and a
        # host env's trace names that env's host table.
        def run_fn(env: Environment[Any, Any, Any]) -> Callable[[jax.Array], Any]:
            def run(key: jax.Array) -> Any:
                state, _ = env.init(key)
                state, ts = env.step(key, state, env.action_space.sample(key))
                return ts

            return run

        try:
            batched = jax.jit(jax.vmap(run_fn(env)))(keys)
        except Exception as exc:  # a host env may refuse vmap, but only with a clear pointer to num_envs
            _require(not env.is_jax_native, f"vmap failed on a JAX-native env: {type(exc).__name__}: {exc}")
            _require("num_envs" in str(exc), f"vmap over a host env must work or name num_envs; got: {exc}")
            return
    for i, key in enumerate(keys):
        with _closing(make_env()) as env:
            single = jax.jit(run_fn(env))(key)
        _require(
            _trees_close(jax.tree.map(lambda x, i=i: x[i], batched), single, options.atol),
            f"vmap result {i} differs from running key {i} alone (mis-routed?)",
        )


def check_determinism(make_env: MakeEnv, options: Options) -> None:
    """The same key gives the same trajectory; different keys give different ones."""
    with _closing(make_env()) as env:
        run = rollout_fn(env, 64)
        actions = jax.random.key(99)  # the same actions every run: only the env's keys vary
        first, again = run(jax.random.key(7), actions), run(jax.random.key(7), actions)
        _require(_trees_close(first, again, 0.0), "two runs with the same key gave different trajectories")
        if options.keys_matter:
            others = [run(jax.random.key(seed), actions) for seed in (8, 9, 10)]
            _require(
                any(not _trees_close(first, other, 0.0) for other in others),
                "four different keys (same actions) gave identical trajectories; "
                "set Options(keys_matter=False) if the environment is deterministic by design",
            )


def _episode_env(make_env: MakeEnv, options: Options) -> Environment[Any, Any, Any]:
    if options.time_limit_kwarg is None:
        return make_env()
    return make_env(**{options.time_limit_kwarg: options.time_limit})


def check_autoreset(make_env: MakeEnv, options: Options) -> None:
    """Same-step auto-reset: final_obs == obs unless done; both in the space; never both flags."""
    with _closing(_episode_env(make_env, options)) as env:
        num_steps = options.num_steps if options.time_limit_kwarg is None else 3 * options.time_limit + 2
        _, steps = rollout(env, jax.random.key(11), num_steps)
        lead = 1 + len(_batch_shape(env))
        done = np.asarray(steps.terminated) | np.asarray(steps.truncated)
        _require(
            not np.any(np.asarray(steps.terminated) & np.asarray(steps.truncated)),
            "terminated and truncated are both set on one step (terminated must win)",
        )
        _require(
            done.any(),
            f"no episode ended in {num_steps} random steps, so auto-reset could not be checked; "
            "set Options(time_limit_kwarg=...) or a larger num_steps",
        )
        same = _leaf_equal(steps.final_obs, steps.obs, lead - 1)
        _require(np.all(same[~done]), "final_obs differs from obs on a step where the episode did not end")
        _require(
            options.reset_obs_can_repeat or np.any(~same[done]),
            "on every step that ended an episode, obs == final_obs: no auto-reset happened",
        )
        space = env.single_observation_space
        _require(_contains_each(space, steps.obs, lead), "some obs lie outside observation_space")
        _require(_contains_each(space, steps.final_obs, lead), "some final_obs lie outside observation_space")
        _require(np.asarray(steps.reward).dtype == np.float32, "reward is not float32")


def check_truncation(make_env: MakeEnv, options: Options) -> None:
    """A time limit T truncates at exactly T steps (no dummy step), and final_obs is the reached obs."""
    if options.time_limit_kwarg is None:
        return  # the environment offers no time limit to set; documented by Options
    limit = options.time_limit
    key = jax.random.key(13)
    with _closing(make_env(**{options.time_limit_kwarg: limit})) as env:
        _, short = rollout(env, key, 3 * limit + 1)
    with _closing(make_env(**{options.time_limit_kwarg: 10 * limit})) as env:
        _, long = rollout(env, key, limit)
    batch_ndim = np.ndim(short.reward) - 1
    terminated, truncated = np.asarray(short.terminated), np.asarray(short.truncated)
    done = terminated | truncated
    # Episode lengths per environment: every truncation at exactly `limit`, none longer.
    lengths = np.zeros(done.shape[1:], int)
    for t in range(done.shape[0]):
        lengths = lengths + 1
        _require(
            np.all(lengths <= limit),
            f"an episode ran past the time limit {limit} (at step {t + 1}): a missed truncation, "
            "or a dummy step after an auto-reset",
        )
        _require(
            np.all(lengths[truncated[t]] == limit),
            f"truncated after {lengths[truncated[t]].tolist()} steps, but the limit is {limit} (dummy step?)",
        )
        lengths = np.where(done[t], 0, lengths)
    # Until its first episode ends, each environment follows the same trajectory in both runs, so
    # where that episode is cut by the limit, final_obs must be the long run's obs at that step.
    cut = truncated[limit - 1] & ~np.any(done[: limit - 1], axis=0)
    if np.any(cut) and not options.obs_depend_on_time_limit:

        def at_limit(tree: Any) -> Any:
            return jax.tree.map(lambda x: x[limit - 1 : limit], tree)

        same = _leaf_equal(at_limit(short.final_obs), at_limit(long.obs), batch_ndim)[0]
        _require(np.all(same[cut]), "final_obs at the time limit is not the observation the episode reached")


def check_errors(make_env: MakeEnv, options: Options) -> None:
    """Bad actions raise ActionError at trace time; use after close raises ClosedEnvironmentError."""
    env = make_env()
    key = jax.random.key(0)
    state, _ = env.init(key)
    space = env.action_space
    good = space.sample(key)
    wrong_shape = jax.tree.map(lambda x: jnp.zeros((*x.shape, 3), x.dtype), good)
    try:
        jax.jit(env.step)(key, state, wrong_shape)
    except ActionError as exc:
        _require(
            "shape" in str(exc) or "structure" in str(exc), f"ActionError for a wrong shape does not say so: {exc}"
        )
    else:
        raise CheckFailure("an action of the wrong shape was accepted")
    integer_leaves = [s for s in (space.leaves if isinstance(space, spaces.Tree) else [space]) if s.dtype.kind in "iu"]
    if integer_leaves and not isinstance(space, spaces.Tree):
        try:
            jax.jit(env.step)(key, state, jnp.asarray(good, jnp.float32))
        except ActionError as exc:
            _require("integers" in str(exc), f"ActionError for floats does not say integers are needed: {exc}")
        else:
            raise CheckFailure("float actions were accepted for an integer action space")
    env.close()
    env.close()  # twice is harmless
    for call in (lambda: env.init(key), lambda: env.step(key, state, good), lambda: env.reset(key, state)):
        try:
            call()
        except ClosedEnvironmentError:
            continue
        raise CheckFailure("using an environment after close() did not raise ClosedEnvironmentError")


def check_close(make_env: MakeEnv, options: Options) -> None:
    """close() frees host resources, through the context manager too; nothing stays alive."""
    with make_env() as env:
        env.init(jax.random.key(0))
    _require(env.closed, "leaving `with envhub.make(...) as env` did not close the env")
    live = getattr(env.unwrapped, "live_host_envs", None)
    if callable(live):
        _require(live() == 0, f"{live()} host environments still alive after close()")


CHECKS: dict[str, Callable[[MakeEnv, Options], None]] = {
    "spaces": check_spaces,
    "init": check_init,
    "structure": check_structure,
    "jit": check_jit,
    "vmap": check_vmap,
    "determinism": check_determinism,
    "autoreset": check_autoreset,
    "truncation": check_truncation,
    "errors": check_errors,
    "close": check_close,
}


def run_check(name: str, make_env: MakeEnv, options: Options = Options()) -> CheckResult:
    """Run one check; a contract violation (or any exception) becomes a failed result."""
    start = time.perf_counter()
    try:
        CHECKS[name](make_env, options)
    except CheckFailure as exc:
        return CheckResult(name, False, str(exc), time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - an unexpected crash is a failure to report, not to hide
        return CheckResult(name, False, f"raised {type(exc).__name__}: {exc}", time.perf_counter() - start)
    return CheckResult(name, True, (CHECKS[name].__doc__ or "").strip(), time.perf_counter() - start)


def run_checks(
    make_env: MakeEnv,
    options: Options = Options(),
    *,
    only: list[str] | None = None,
    on_start: Callable[[str, int, int], None] | None = None,
) -> list[CheckResult]:
    """Run every check (or ``only`` some), calling ``on_start(name, index, total)`` before each."""
    names = list(only or CHECKS)
    results = []
    for i, name in enumerate(names):
        if on_start is not None:
            on_start(name, i, len(names))
        results.append(run_check(name, make_env, options))
    return results


def format_report(results: list[CheckResult]) -> str:
    """A readable table of results, failures explained."""
    lines = [
        f"{'PASS' if r.passed else 'FAIL'}  {r.name:<12} {r.seconds:6.1f}s  {'' if r.passed else r.message}"
        for r in results
    ]
    failed = sum(not r.passed for r in results)
    lines.append(f"{len(results) - failed} passed, {failed} failed")
    return "\n".join(lines)


def options_for(spec: Any, **overrides: Any) -> Options:
    """The Options a backend registered for ``spec`` (an ``envhub.EnvSpec``), plus ``overrides``."""
    fields = {f.name for f in dataclasses.fields(Options)}
    given = {**spec.check_options, **overrides}
    unknown = sorted(set(given) - fields)
    if unknown:
        raise ValueError(f"check_options of {spec.id!r} has unknown field(s) {unknown}; Options has {sorted(fields)}.")
    return Options(**given)


def check_env(make_env: MakeEnv, options: Options = Options()) -> None:
    """Run every check and raise ``AssertionError`` with the report if any fails."""
    results = run_checks(make_env, options)
    if not all(r.passed for r in results):
        raise AssertionError("envhub conformance failed:\n" + format_report(results))


class ConformanceTests:
    """pytest base class: set ``env_id`` (and options) or override ``make_env``; one test per check."""

    env_id: str = ""
    make_kwargs: dict[str, Any] = {}
    #: ``None`` takes the options the backend registered for ``env_id``.
    options: Options | None = None

    def make_env(self, **kwargs: Any) -> Environment[Any, Any, Any]:
        import envhub

        return envhub.make(self.env_id, **{**self.make_kwargs, **kwargs})

    def _options(self) -> Options:
        if self.options is not None:
            return self.options
        import envhub

        return options_for(envhub.default_registry().spec(self.env_id))

    def _run(self, name: str) -> None:
        result = run_check(name, self.make_env, self._options())
        if not result.passed:
            raise AssertionError(f"{name}: {result.message}")

    def test_spaces(self) -> None:
        self._run("spaces")

    def test_init(self) -> None:
        self._run("init")

    def test_structure(self) -> None:
        self._run("structure")

    def test_jit(self) -> None:
        self._run("jit")

    def test_vmap(self) -> None:
        self._run("vmap")

    def test_determinism(self) -> None:
        self._run("determinism")

    def test_autoreset(self) -> None:
        self._run("autoreset")

    def test_truncation(self) -> None:
        self._run("truncation")

    def test_errors(self) -> None:
        self._run("errors")

    def test_close(self) -> None:
        self._run("close")


__all__ = [
    "CHECKS",
    "CheckFailure",
    "CheckResult",
    "ConformanceTests",
    "Options",
    "check_env",
    "format_report",
    "options_for",
    "rollout",
    "run_check",
    "run_checks",
]
