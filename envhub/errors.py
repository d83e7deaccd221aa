"""The envhub exception hierarchy.

Every message names the bad value, the rule it broke and the fix. Classes also inherit from the
closest builtin (``ValueError``, ``LookupError``, ``ImportError``, ...) so generic handlers work.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence


class EnvhubError(Exception):
    """Base class of every error envhub raises on purpose."""


class InvalidIdError(EnvhubError, ValueError):
    """An environment id is not of the form ``prefix/Name``."""

    def __init__(self, env_id: object) -> None:
        super().__init__(
            f"Environment id {env_id!r} is not of the form 'prefix/Name'; add the backend prefix, "
            f"e.g. 'gymnax/CartPole-v1' (run `envhub list` to see the installed prefixes)."
        )
        self.env_id = env_id


class InvalidArgumentError(EnvhubError, ValueError):
    """An argument has a bad value (the message says which and what is allowed)."""


class UnknownBackendError(EnvhubError, LookupError):
    """No installed or registered plugin provides this prefix (or a plugin switch hides the one that does)."""

    def __init__(self, prefix: str, known: Iterable[str], install: str = "", note: str = "") -> None:
        known = sorted(known)
        tail = note or (f"Run `envhub list` to see them, or install a plugin{f', e.g. {install}' if install else ''}.")
        super().__init__(
            f"No envhub backend is named {prefix!r}{_suggest(prefix, known)}; "
            f"{'loaded' if note else 'installed'} backends: {', '.join(known) or 'none'}. {tail}"
        )
        self.prefix = prefix
        self.known = known


class UnknownEnvError(EnvhubError, LookupError):
    """The backend exists but offers no environment of this name."""

    def __init__(self, prefix: str, name: str, known: Sequence[str]) -> None:
        super().__init__(
            f"Backend {prefix!r} has no environment {name!r}{_suggest(name, known, prefix + '/')}; "
            f"run `envhub list {prefix}` to see all {len(known)} of them."
        )
        self.prefix = prefix
        self.name = name


class EnvUnavailableError(EnvhubError, RuntimeError):
    """The environment is known but cannot run here (e.g. it needs a download)."""

    def __init__(self, env_id: str, reason: str) -> None:
        super().__init__(f"Environment {env_id!r} is listed but unavailable here: {reason}")
        self.env_id = env_id
        self.reason = reason


class BackendNotInstalledError(EnvhubError, ImportError):
    """The plugin is installed but the backend library it wraps is not."""

    def __init__(self, prefix: str, missing: str, install_hint: str) -> None:
        super().__init__(
            f"Backend {prefix!r} needs the Python package {missing!r}, which is not installed; "
            f"install it with: {install_hint}"
        )
        self.prefix = prefix
        self.missing = missing
        self.install_hint = install_hint


class PluginLoadError(EnvhubError, ImportError):
    """A plugin raised: importing its module, in a hook, or in an environment's factory (``during`` says which)."""

    def __init__(self, prefix: str, origin: str, exc: BaseException, during: str = "") -> None:
        making = during.startswith("while making")
        super().__init__(
            f"The envhub plugin {prefix!r} ({origin}) failed{f' {during}' if during else ''}: "
            f"{type(exc).__name__}: {one_line(exc)}. "
            + (
                "Check the keyword arguments you gave against the backend's README; if they are right, the "
                "plugin is at fault: reinstall or update it, or report it to its authors. Other backends still work."
                if making
                else "Other backends still work; reinstall or fix that plugin, or skip it with "
                "ENVHUB_PLUGINS=<the prefixes you need>."
            )
        )
        self.prefix = prefix
        self.origin = origin
        self.during = during
        self.original: BaseException | None = exc


class PluginIncompatibleError(PluginLoadError):
    """A plugin was written for a plugin API, or requires an envhub version, that this core is not."""

    def __init__(self, prefix: str, origin: str, problem: str, fix: str) -> None:
        EnvhubError.__init__(
            self, f"The envhub plugin {prefix!r} ({origin}) {problem}; other backends still work; fix: {fix}."
        )
        self.prefix = prefix
        self.origin = origin
        self.during = ""
        self.original = None


class DuplicatePrefixError(EnvhubError, ValueError):
    """Two plugins claim the same prefix."""

    def __init__(self, prefix: str, first: str, second: str) -> None:
        super().__init__(
            f"Backend prefix {prefix!r} is claimed by both {first!r} and {second!r}; prefixes must "
            f"be unique: uninstall one of them (pip uninstall <name>)."
        )
        self.prefix = prefix
        self.owners = (first, second)


class ClosedEnvironmentError(EnvhubError, RuntimeError):
    """An environment was used after ``close()``."""

    def __init__(self, env_id: str, method: str, *, traced: bool = False) -> None:
        if traced:  # a compiled function still names an environment that is gone
            message = (
                f"{method}() ran in a jitted function traced with environment {env_id!r}, which has since been "
                f"closed or garbage-collected; jax.jit reuses the trace of the same Python function, so build "
                f"the jitted function after making the environment it uses (e.g. pass env to a factory)."
            )
        else:
            message = (
                f"{method}() called on environment {env_id!r} after close(); environments cannot be "
                f"reopened: create a new one with envhub.make({env_id!r})."
            )
        super().__init__(message)
        self.env_id = env_id


class StaleStateError(EnvhubError, RuntimeError):
    """A host environment was stepped from a state that is no longer its newest."""

    def __init__(self, env_id: str, given: int, newest: int | None) -> None:
        if newest is None:
            problem = (
                f"was given a state (from step {given}) whose host environment it does not hold: "
                f"that environment was closed, or the state belongs to another environment object"
            )
        else:
            problem = f"was given a state from step {given}, but its newest state is from step {newest}"
        super().__init__(
            f"Environment {env_id!r} {problem}: host environments live outside JAX and cannot branch or rewind. "
            f"Always pass the state returned by the previous init/reset/step; for tree search use "
            f"a JAX-native backend."
        )
        self.env_id = env_id
        self.given = given
        self.newest = newest


class HostEnvError(EnvhubError, RuntimeError):
    """The backend raised inside a host environment call."""

    def __init__(self, env_id: str, method: str, exc: BaseException) -> None:
        super().__init__(
            f"Environment {env_id!r} raised in {method}(): {type(exc).__name__}: {exc}. The host "
            f"environment is now in an unknown state: close() it and make a new one."
        )
        self.env_id = env_id
        self.original = exc


class HostVmapError(EnvhubError, ValueError):
    """``jax.vmap`` was applied to a host environment in a way it cannot follow."""

    def __init__(self, env_id: str, problem: str) -> None:
        super().__init__(
            f"Environment {env_id!r} is a host environment and {problem}. Either create the states inside "
            f"vmap (vmap over init's key: one host environment per key), or batch on the host with "
            f"envhub.make({env_id!r}, num_envs=N)."
        )
        self.env_id = env_id


class EnvKwargsError(EnvhubError, TypeError):
    """A keyword argument given to ``make`` is unknown to the environment, refused by it, or of the wrong type."""

    def __init__(self, env_id: str, problem: str, fix: str, kwarg: str | None = None) -> None:
        super().__init__(f"make({env_id!r}, ...): {problem}; {fix}.")
        self.env_id = env_id
        self.kwarg = kwarg


class BackendArgumentError(EnvhubError):
    """A backend's factory refused an argument given to ``make``; each is also of the class it raised (``original``)."""


class ActionError(EnvhubError, TypeError):
    """An action does not fit the action space: its structure, shape or dtype (at trace time) or a value."""

    #: How every message starts.
    PREFIX = "Invalid action for "

    def __init__(self, env_id: str, problem: str, space: object, fix: str = "") -> None:
        fix = fix or "pass an action of that shape and dtype (e.g. env.action_space.sample(key))"
        super().__init__(f"{self.PREFIX}{env_id!r}: {problem}; the action space is {space!r}: {fix}.")
        self.env_id = env_id

    @classmethod
    def from_message(cls, message: str) -> ActionError:
        """The error whose message (from a checkify report of the in-jit check) is ``message``."""
        error = cls.__new__(cls)
        Exception.__init__(error, message)
        env_id = message.removeprefix(cls.PREFIX).split(": ", 1)[0]
        error.env_id = env_id[1:-1] if env_id[:1] in "'\"" else env_id
        return error


class RenderError(EnvhubError, RuntimeError):
    """An environment cannot draw this state (or at all); the message says why and what to do."""

    def __init__(self, env_id: str, problem: str, fix: str) -> None:
        super().__init__(f"Cannot render {env_id!r}: {problem}; {fix}")
        self.env_id = env_id


class MissingDependencyError(EnvhubError, ImportError):
    """An optional feature needs a Python package that is not installed."""

    def __init__(self, purpose: str, package: str, install_hint: str) -> None:
        super().__init__(
            f"{purpose} needs the Python package {package!r}, which is not installed; install it with: {install_hint}"
        )
        self.package = package
        self.install_hint = install_hint


def one_line(exc: BaseException) -> str:
    """``str(exc)`` on one line (runs of whitespace, newlines included, become one space)."""
    return " ".join(str(exc).split()) or "(no message)"


def _suggest(word: str, candidates: Iterable[str], prefix: str = "") -> str:
    """Return ' (did you mean ...?)' for close matches, matching case-insensitively."""
    by_lower = {c.lower(): c for c in candidates}
    matches = difflib.get_close_matches(word.lower(), list(by_lower), n=3, cutoff=0.6)
    if not matches:
        return ""
    return " (did you mean " + " or ".join(repr(prefix + by_lower[m]) for m in matches) + "?)"


class PicklingUnsupportedError(EnvhubError, TypeError):
    """An env that ``envhub.make`` did not build cannot be pickled (it is rebuilt from its id on load)."""

    def __init__(self, env: object, why: str) -> None:
        super().__init__(
            f"cannot pickle {env!r}: {why}. envhub pickles an env as its id, make kwargs and wrapper "
            f"chain and rebuilds it on load; build it with envhub.make(id, ...) (and wrappers), or "
            f"construct it in the receiving process (e.g. pass a function that makes it)."
        )


class ForkAfterJaxWarning(RuntimeWarning):
    """The process forks after JAX started its threads: the child may hang (use forkserver or spawn)."""


__all__ = [
    "ActionError",
    "BackendArgumentError",
    "BackendNotInstalledError",
    "ClosedEnvironmentError",
    "DuplicatePrefixError",
    "EnvKwargsError",
    "EnvUnavailableError",
    "EnvhubError",
    "ForkAfterJaxWarning",
    "HostEnvError",
    "HostVmapError",
    "InvalidArgumentError",
    "InvalidIdError",
    "MissingDependencyError",
    "PicklingUnsupportedError",
    "PluginIncompatibleError",
    "PluginLoadError",
    "RenderError",
    "StaleStateError",
    "UnknownBackendError",
    "UnknownEnvError",
    "one_line",
]
