"""Settings for every test under this repository (the core's and each plugin's).

Most of the suite's time is XLA compiling small programs that then run for milliseconds, so the
tests ask XLA's CPU backend for cheap code: no LLVM optimisation and no fusion emitters. On this
2-core machine that compiles the kit's programs 2-2.5x faster, with each rollout still running in
milliseconds; it changes no semantics (the kit compares jitted runs with eager ones compiled the
same way). Set ENVHUB_TEST_XLA_FLAGS=default to test with XLA's usual optimisations instead.
"""

import gc
import os
import sys
from pathlib import Path

CHEAP_COMPILES = ["--xla_backend_optimization_level=0", "--xla_cpu_use_fusion_emitters=false"]
#: The flags of CHEAP_COMPILES the installed jaxlib refuses (left out; shown in pytest's header).
DROPPED_FLAGS: list[str] = []

if not os.environ.get("ENVHUB_TEST_XLA_FLAGS_SET"):
    # Read when jax starts its CPU backend (the first computation), which no import has done yet;
    # subprocesses the tests start inherit it. Only the flags this jaxlib knows (tests/xla_flags.py:
    # an unknown one aborts the process, and pytest's capture would hide why).
    from xla_flags import known_flags

    _user_flags = os.environ.get("XLA_FLAGS", "")
    _kept, DROPPED_FLAGS = known_flags(
        [] if os.environ.get("ENVHUB_TEST_XLA_FLAGS") == "default" else CHEAP_COMPILES,
        _user_flags,
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "envhub" / "xla-flags.json",
    )
    os.environ["XLA_FLAGS"] = " ".join([_user_flags, *_kept]).strip()
    os.environ["ENVHUB_TEST_XLA_FLAGS_SET"] = "1"  # xdist workers and subprocesses inherit the result

# Where the environment sets PYTHONDONTWRITEBYTECODE (this machine does), every test process and
# subprocess would compile jax's sources again on import (10 s instead of 5 s for jax and the
# backends); let the first import write the bytecode cache for all the others.
sys.dont_write_bytecode = False

# JAX's persistent compilation cache, kept between runs in a user-level folder outside the clone and
# shared by the xdist workers, every subprocess and side venv (they inherit these variables; the side
# venvs pin the same jax). A program with a Python host callback is not cached (up to jax 0.10), which is why envhub's
# JAX-native programs have none (docs/performance.md). JAX keys each entry by the program, the compile
# options and the jax/jaxlib versions, so a stale entry is a miss, never a wrong result. JAX's own size
# cap stays off (tests/jax_cache.py says why); the controller prunes the folder once per run instead.
# ENVHUB_TEST_JAX_CACHE=DIR picks another folder, =off runs without it (a cold run every time).
_CACHE = os.environ.get("ENVHUB_TEST_JAX_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "envhub", "jax-tests"
)
if _CACHE != "off":
    os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", _CACHE)
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")  # the suite's programs are small
    if "jax" in sys.modules:  # read at jax's import: too late for this process, so set it too
        import jax

        jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    if not os.environ.get("ENVHUB_TEST_JAX_CACHE_PRUNED"):  # once per run: not again in workers and subprocesses
        from jax_cache import prune

        prune(os.environ["JAX_COMPILATION_CACHE_DIR"])
        os.environ["ENVHUB_TEST_JAX_CACHE_PRUNED"] = "1"

# Tracing builds many short-lived objects over a heap of long-lived ones (jax, the backends, MuJoCo)
# that Python's default collector thresholds sweep again and again: collect less often, and freeze what
# collection imported (pytest_collection_finish). 8 % less CPU per worker, measured on the jumanji tests.
gc.set_threshold(10_000, 20, 100)

# Test modules import MuJoCo-based libraries (playground, brax) at collection; MuJoCo picks its OpenGL
# platform on that first import, and its default aborts a headless renderer later in the same worker.
from envhub.tools.render import use_egl_when_headless  # noqa: E402

use_egl_when_headless()
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# --- tests that need a plugin run only where it is installed --------------------------------------
# The root testpaths name every in-repo plugin, but a clone may install only some (CONTRIBUTING's
# commands must run with only envhub-gymnax installed). A plugin's test modules import its backend
# library at the top, so where the plugin or one of its requirements is missing, each of its test
# modules is reported as SKIPPED with the reason instead of failing to import. A core test that
# needs a plugin says so with the `requires_plugin` marker, or is listed in CORE_TESTS_NEEDING_PLUGINS.

import functools  # noqa: E402
import importlib.metadata  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402

import pytest  # noqa: E402
from packaging.requirements import Requirement  # noqa: E402
from packaging.specifiers import SpecifierSet  # noqa: E402

# The python blocks of README.md and docs/*.md run as tests (tests/markdown_blocks.py); `-m quick`
# selects the inner-loop tier (tests/tiers.py).
pytest_plugins = ["markdown_blocks", "tiers"]

PLUGINS = Path(__file__).resolve().parent / "plugins"

#: Core tests (node ids or their prefixes) that need in-repo plugins besides their own module's
#: imports: each gets ``requires_plugin(*prefixes)``.
CORE_TESTS_NEEDING_PLUGINS: dict[str, tuple[str, ...]] = {
    "tests/test_wrappers_host.py": ("gymnasium",),
    "tests/test_interop.py::test_from_brax_wraps_a_users_env_object": ("brax",),
    # the `single` worker runs a gymnax, a brax and a jaxmarl job; the `pair` workers a gymnasium pool each
    "tests/test_sharding.py::test_eight_devices_bit_identical_and_sharded": ("brax", "jaxmarl"),
    "tests/test_sharding.py::test_brax_eight_devices_equal_to_float32_rounding": ("brax", "jaxmarl"),
    "tests/test_sharding.py::test_multi_agent_eight_devices_bit_identical_and_sharded": ("brax", "jaxmarl"),
    "tests/test_sharding.py::test_two_processes_each_step_their_shard": ("gymnasium",),
    "tests/test_sharding.py::test_host_pools_one_per_process": ("gymnasium",),
}


@functools.cache
def plugin_not_installed(plugin_dir: Path) -> str | None:
    """Why the plugin in ``plugin_dir`` cannot be used here (it or a requirement is not installed), or None."""
    match = re.search(r'^name\s*=\s*"([^"]+)"', (plugin_dir / "pyproject.toml").read_text(), re.MULTILINE)
    if match is None:
        return None
    name, install = match.group(1), f"uv pip install -e plugins/{plugin_dir.name}"
    python = re.search(r'^requires-python\s*=\s*"([^"]+)"', (plugin_dir / "pyproject.toml").read_text(), re.MULTILINE)
    if python is not None and not SpecifierSet(python.group(1)).contains(platform.python_version()):
        return f"{name} needs Python {python.group(1)}, this is {platform.python_version()}"
    try:
        requires = importlib.metadata.requires(name) or []
    except importlib.metadata.PackageNotFoundError:
        return f"the {name} plugin is not installed ({install})"
    for line in requires:
        requirement = Requirement(line)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue  # an optional extra's requirement, or not for this platform
        try:
            importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            return f"{name} requires {requirement.name}, which is not installed ({install})"
    return None


class SkippedPluginModule(pytest.Module):
    """A plugin's test module, not imported: collecting it reports a skip naming it, with ``reason``."""

    reason = ""

    def collect(self) -> list[pytest.Item]:
        pytest.skip(f"{self.path.relative_to(PLUGINS.parent)} not run: {self.reason}")


def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.Module | None:
    try:
        plugin_dir = PLUGINS / module_path.resolve().relative_to(PLUGINS).parts[0]
    except ValueError:
        return None  # not a plugin's test
    reason = plugin_not_installed(plugin_dir) if (plugin_dir / "pyproject.toml").is_file() else None
    if reason is None:
        return None
    module = SkippedPluginModule.from_parent(parent, path=module_path)
    module.reason = reason
    return module


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for node, prefixes in CORE_TESTS_NEEDING_PLUGINS.items():
            if item.nodeid == node or item.nodeid.startswith((f"{node}::", f"{node}[")):
                item.add_marker(pytest.mark.requires_plugin(*prefixes))
        reasons = [
            plugin_not_installed(PLUGINS / f"envhub-{prefix}")
            for marker in item.iter_markers("requires_plugin")
            for prefix in marker.args
        ]
        missing = [reason for reason in reasons if reason is not None]
        if missing:
            item.add_marker(pytest.mark.skip(reason="; ".join(missing)))


def pytest_report_header(config: pytest.Config) -> str:
    dropped = f" (left out, unknown to this jaxlib: {' '.join(DROPPED_FLAGS)})" if DROPPED_FLAGS else ""
    return f"XLA_FLAGS: {os.environ.get('XLA_FLAGS', '')!r}{dropped}"


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker (not a pytest this suite runs in a subprocess)
        import atexit

        atexit.register(_exit_without_teardown)


def _exit_without_teardown() -> None:
    """An xdist worker, done (its results sent to the controller), exits without the interpreter's
    teardown and the exit handlers registered before the worker configured (jax's clean-up among them);
    those of libraries imported later still run first. The controller waits for its workers to exit:
    measured, 5-7 s at the end of a whole run before, 1.5 s with this."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Where ENVHUB_TEST_RUN_FILE is set (.ci/run, per job): record what this run ran on (tests/run_file.py)."""
    path = os.environ.get("ENVHUB_TEST_RUN_FILE")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if path and reporter is not None and not hasattr(session.config, "workerinput"):
        from run_file import backend_libraries, write

        write(path, session.config.invocation_params.args, reporter.stats, exitstatus,
              backend_libraries(PLUGINS, plugin_not_installed))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Leave the imported modules out of every later garbage collection (see gc.set_threshold above)."""
    gc.collect()
    gc.freeze()
