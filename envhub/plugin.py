"""The plugin author's surface: everything a backend plugin may use, in one module (plugin API 1).

A plugin imports envhub only as ``envhub``, ``envhub.plugin`` and, in its tests, ``envhub.testing``.
Every name in ``__all__`` keeps working, unchanged, on every release with the same ``PLUGIN_API``;
envhub's other modules may change under a plugin. Re-exports only: each name is documented where
it is defined, and CONTRIBUTING.md ("Plugin author's API") says what each group is for. The step
records ``JaxStep`` and ``HostStep`` take keywords only.
"""

from __future__ import annotations

from envhub import spaces, testing
from envhub.core.action_check import any_invalid, host_value_checker
from envhub.core.arguments import positive_int
from envhub.core.bounds import Bounds, Range
from envhub.core.checking import checks_values_on_host, values_checked_by_caller
from envhub.core.drawing import draw_each
from envhub.core.env import Environment
from envhub.core.kwargs import OTHERS, REQUIRED, TIME_LIMIT_KWARG, Kwarg, from_signature, infer_type, time_limit_kwargs
from envhub.core.mjx_params import MjxParams, WithMjxParams
from envhub.core.tree import select
from envhub.core.types import TimeStep, truncated_unless_terminated
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
from envhub.host.callback import call_host
from envhub.host.environment import HostEnvironment, HostState, HostStep, key_to_seeds
from envhub.host.gymnasium_spaces import from_gymnasium_space, to_gymnasium_action, to_gymnasium_space
from envhub.native.environment import JaxEnvironment, JaxState, JaxStep, jax_kwargs, take_time_limit
from envhub.native.resets import Spares, no_spares, reset_done, reset_from_spares, reset_if_done, vmap_in_chunks
from envhub.registry.hookspecs import EnvFactory, RegisterEnv, WrapObject, hookimpl
from envhub.registry.plugin_api import PLUGIN_API
from envhub.registry.specs import check_options_for
from envhub.testing import ConformanceTests
from envhub.tools.quiet import mujoco_warnings_dropped, printed_lines_dropped
from envhub.tools.render import use_egl_when_headless

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
    "Range",
    # params as data
    "Bounds",
    "MjxParams",
    "WithMjxParams",
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
    "mujoco_warnings_dropped",
    "printed_lines_dropped",
    "draw_each",
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
