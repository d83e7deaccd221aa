"""The plugin author's surface: everything a backend plugin may use, in one module (plugin API 1).

A plugin imports envhub only as ``envhub``, ``envhub.plugin`` and, in its tests, ``envhub.testing``.
Every name in ``__all__`` keeps working, unchanged, on every release with the same ``PLUGIN_API``;
envhub's other modules may change under a plugin. Re-exports only: each name is documented where
it is defined, and CONTRIBUTING.md ("Plugin author's API") says what each group is for. The step
records ``JaxStep`` and ``HostStep`` take keywords only.
"""

from __future__ import annotations

from envhub import spaces, testing
from envhub.action_check import any_invalid, host_value_checker
from envhub.arguments import positive_int
from envhub.checking import checks_values_on_host, values_checked_by_caller
from envhub.env import Environment
from envhub.errors import (
    ActionError,
    ClosedEnvironmentError,
    EnvhubError,
    EnvKwargsError,
    EnvUnavailableError,
    HostEnvError,
    HostVmapError,
    InvalidArgumentError,
    MissingDependencyError,
    RenderError,
    StaleStateError,
)
from envhub.gymnasium_spaces import from_gymnasium_space, to_gymnasium_action, to_gymnasium_space
from envhub.hookspecs import EnvFactory, RegisterEnv, WrapObject, hookimpl
from envhub.host import HostEnvironment, HostState, HostStep, key_to_seeds
from envhub.host_callback import call_host
from envhub.jax_env import JaxEnvironment, JaxState, JaxStep, jax_kwargs, take_time_limit
from envhub.kwargs import OTHERS, REQUIRED, TIME_LIMIT_KWARG, Kwarg, from_signature, infer_type, time_limit_kwargs
from envhub.plugin_api import PLUGIN_API
from envhub.render import use_egl_when_headless
from envhub.resets import Spares, no_spares, reset_done, reset_from_spares, reset_if_done, vmap_in_chunks
from envhub.specs import check_options_for
from envhub.testing import ConformanceTests
from envhub.tree import select
from envhub.types import TimeStep, truncated_unless_terminated

__all__ = [
    # declaring the plugin
    "PLUGIN_API",
    "EnvFactory",
    "RegisterEnv",
    "WrapObject",
    "hookimpl",
    "check_options_for",
    "Kwarg",
    "OTHERS",
    "REQUIRED",
    "TIME_LIMIT_KWARG",
    "from_signature",
    "infer_type",
    "time_limit_kwargs",
    # JAX-native backends
    "JaxEnvironment",
    "JaxState",
    "JaxStep",
    "jax_kwargs",
    "take_time_limit",
    "positive_int",
    "Spares",
    "no_spares",
    "reset_done",
    "reset_from_spares",
    "reset_if_done",
    "vmap_in_chunks",
    "select",
    # host backends
    "HostEnvironment",
    "HostState",
    "HostStep",
    "key_to_seeds",
    "call_host",
    "checks_values_on_host",
    "any_invalid",
    "host_value_checker",
    "values_checked_by_caller",
    "from_gymnasium_space",
    "to_gymnasium_action",
    "to_gymnasium_space",
    # both
    "Environment",
    "TimeStep",
    "truncated_unless_terminated",
    "spaces",
    "use_egl_when_headless",
    # errors
    "ActionError",
    "ClosedEnvironmentError",
    "EnvKwargsError",
    "EnvUnavailableError",
    "EnvhubError",
    "HostEnvError",
    "HostVmapError",
    "InvalidArgumentError",
    "MissingDependencyError",
    "RenderError",
    "StaleStateError",
    # tests
    "ConformanceTests",
    "testing",
]
