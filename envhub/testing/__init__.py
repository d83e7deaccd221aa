"""The conformance kit: the checks every envhub backend must pass.

A plugin applies it in a few lines, either as a pytest base class::

    class TestCartPole(envhub.testing.ConformanceTests):
        env_id = "gymnax/CartPole-v1"

or one check at a time (``run_check(name, make_env, options)``), or all at once
(``check_env(make_env, options)`` raises ``AssertionError`` with a readable report).
``make_env(**kwargs)`` must return a *fresh* environment each call.

A check passes, fails, or is skipped when it cannot apply to the env (the reason says why). The
checks of one env share a ``Probe``: its few programs (first steps, one rollout, one with a short
time limit) compile once and every check inspects their output.

Layout: ``probe`` (Options, rollouts, the shared programs) <- ``checks`` (with ``compiled_checks``:
``pure``, ``export``, ``refusal``, and ``host_callbacks(lowered_text)``) <- ``suite`` (results,
report, ``ConformanceTests``); ``_compare`` holds the host-side comparisons. ``toy_envs`` holds
``Corridor``, a tiny correct environment (and its deliberately buggy variants) to test wrappers on.
"""

from envhub.testing import toy_envs
from envhub.testing.checks import CHECKS
from envhub.testing.compare import CheckFailure, CheckSkipped
from envhub.testing.compiled_checks import host_callbacks
from envhub.testing.probe import Options, Probe, rollout, rollout_fn
from envhub.testing.suite import (
    CheckResult,
    ConformanceTests,
    check_env,
    format_report,
    options_for,
    run_check,
    run_checks,
)

__all__ = [
    "CHECKS",
    "CheckFailure",
    "CheckResult",
    "CheckSkipped",
    "ConformanceTests",
    "Options",
    "Probe",
    "check_env",
    "format_report",
    "host_callbacks",
    "options_for",
    "rollout",
    "rollout_fn",
    "run_check",
    "run_checks",
    "toy_envs",
]
