"""Running checks: results, the report, ``check_env`` and the pytest base class ``ConformanceTests``."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from envhub.core.env import Environment
from envhub.errors import InvalidArgumentError
from envhub.testing.checks import CHECKS
from envhub.testing.compare import CheckFailure, CheckSkipped
from envhub.testing.probe import MakeEnv, Options, Probe

Status = Literal["pass", "fail", "skip"]
DEFAULT_OPTIONS = Options()


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The outcome of one check: ``status`` is "pass", "fail" or "skip" (it did not apply; ``message`` says why)."""

    name: str
    status: Status
    message: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    @property
    def skipped(self) -> bool:
        return self.status == "skip"


def run_check(
    name: str, make_env: MakeEnv, options: Options = DEFAULT_OPTIONS, *, probe: Probe | None = None
) -> CheckResult:
    """Run one check; a contract violation (or any exception) becomes a failed result.

    ``probe`` shares compiled programs between checks of one env (``run_checks`` passes one);
    without it the check gets its own probe, closed afterwards.
    """
    own = probe is None
    probe = Probe(make_env, options) if probe is None else probe
    start = time.perf_counter()
    try:
        CHECKS[name](probe)
    except CheckSkipped as exc:
        return CheckResult(name, "skip", str(exc), time.perf_counter() - start)
    except CheckFailure as exc:
        return CheckResult(name, "fail", str(exc), time.perf_counter() - start)
    except Exception as exc:  # noqa: BLE001 - an unexpected crash is a failure to report, not to hide
        return CheckResult(name, "fail", f"raised {type(exc).__name__}: {exc}", time.perf_counter() - start)
    finally:
        if own:
            probe.close()
    return CheckResult(name, "pass", (CHECKS[name].__doc__ or "").strip(), time.perf_counter() - start)


def run_checks(
    make_env: MakeEnv,
    options: Options = DEFAULT_OPTIONS,
    *,
    only: list[str] | None = None,
    on_start: Callable[[str, int, int], None] | None = None,
) -> list[CheckResult]:
    """Run every check (or ``only`` some) on one shared probe, calling ``on_start(name, index, total)`` before each."""
    names = list(only or CHECKS)
    probe = Probe(make_env, options)
    results = []
    try:
        for i, name in enumerate(names):
            if on_start is not None:
                on_start(name, i, len(names))
            results.append(run_check(name, make_env, options, probe=probe))
    finally:
        probe.close()
    return results


def format_report(results: list[CheckResult]) -> str:
    """A readable table of results, failures and skips explained."""
    lines = [f"{r.status.upper():<4}  {r.name:<12} {r.seconds:6.1f}s  {'' if r.passed else r.message}" for r in results]
    counts = {status: sum(r.status == status for r in results) for status in ("pass", "fail", "skip")}
    lines.append(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    return "\n".join(lines)


def _known_fields(given: dict[str, Any], where: str) -> dict[str, Any]:
    """``given``, if every key is a field of ``Options``; else an error naming ``where`` they came from."""
    fields = {f.name for f in dataclasses.fields(Options)}
    unknown = sorted(set(given) - fields)
    if unknown:
        raise InvalidArgumentError(f"{where} has unknown field(s) {unknown}; Options has {sorted(fields)}.")
    return given


def options_for(spec: Any, **overrides: Any) -> Options:
    """The Options a backend registered for ``spec`` (an ``envhub.EnvSpec``), plus ``overrides``."""
    return Options(**_known_fields({**spec.check_options, **overrides}, f"check_options of {spec.id!r}"))


def check_env(make_env: MakeEnv, options: Options = DEFAULT_OPTIONS) -> None:
    """Run every check and raise ``AssertionError`` with the report if any fails (skips are fine)."""
    results = run_checks(make_env, options)
    if any(r.failed for r in results):
        raise AssertionError("envhub conformance failed:\n" + format_report(results))


class ConformanceTests:
    """pytest base class: one test per check, on the env that ``make_env`` makes.

    Class attributes:
        env_id: The id ``make_env`` passes to ``envhub.make`` (with ``make_kwargs``); its registered
            ``check_options`` are the options unless ``options`` is set.
        make_kwargs: Extra ``envhub.make`` kwargs, e.g. ``{"num_envs": 4}``.
        options: ``testing.Options`` replacing the registered ones (needed when ``make_env`` is
            overridden and there is no ``env_id``).
        option_overrides: ``Options`` fields set on top of the options above, e.g.
            ``{"time_limit": 5, "num_steps": 20}`` for a slow env.

    The checks of one class share a probe, so its programs compile once per process; under
    pytest-xdist, ``--dist loadscope`` keeps a class on one worker.
    """

    env_id: str = ""
    make_kwargs: ClassVar[dict[str, Any]] = {}
    options: Options | None = None
    option_overrides: ClassVar[dict[str, Any]] = {}
    _probes: ClassVar[dict[type, Probe]] = {}

    def make_env(self, **kwargs: Any) -> Environment[Any, Any, Any]:
        import envhub

        return envhub.make(self.env_id, **{**self.make_kwargs, **kwargs})

    def _options(self) -> Options:
        name = type(self).__name__
        if self.options is not None:
            options = self.options
        elif self.env_id:
            import envhub

            options = options_for(envhub.default_registry().spec(self.env_id))
        else:
            raise InvalidArgumentError(
                f"{name} sets neither env_id nor options; set env_id (its registered check options apply) "
                "or options = testing.Options(...)."
            )
        return dataclasses.replace(options, **_known_fields(self.option_overrides, f"{name}.option_overrides"))

    def _probe(self) -> Probe:
        cls = type(self)
        if cls not in ConformanceTests._probes:
            ConformanceTests._probes[cls] = Probe(self.make_env, self._options())
        return ConformanceTests._probes[cls]

    @classmethod
    def teardown_class(cls) -> None:
        probe = ConformanceTests._probes.pop(cls, None)
        if probe is not None:
            probe.close()

    def _run(self, name: str) -> None:
        result = run_check(name, self.make_env, self._options(), probe=self._probe())
        if result.skipped:
            import pytest

            pytest.skip(f"{name}: {result.message}")
        if result.failed:
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

    def test_refusal(self) -> None:
        self._run("refusal")

    def test_pure(self) -> None:
        self._run("pure")

    def test_export(self) -> None:
        self._run("export")

    def test_params(self) -> None:
        self._run("params")

    def test_close(self) -> None:
        self._run("close")


__all__ = [
    "CheckResult",
    "ConformanceTests",
    "DEFAULT_OPTIONS",
    "Status",
    "check_env",
    "format_report",
    "options_for",
    "run_check",
    "run_checks",
]
