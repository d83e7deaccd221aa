"""Settings for every test under this repository (the core's and each plugin's).

Most of the suite's time is XLA compiling small programs that then run for milliseconds, so the
tests ask XLA's CPU backend for cheap code: no LLVM optimisation and no fusion emitters. On this
2-core machine that compiles the kit's programs 2-2.5x faster, with each rollout still running in
milliseconds; it changes no semantics (the kit compares jitted runs with eager ones compiled the
same way). Set ENVHUB_TEST_XLA_FLAGS=default to test with XLA's usual optimisations instead.
"""

import os
import sys

CHEAP_COMPILES = "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"

if os.environ.get("ENVHUB_TEST_XLA_FLAGS") != "default":
    # Read when jax starts its CPU backend (the first computation), which no import has done yet;
    # subprocesses the tests start inherit it.
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {CHEAP_COMPILES}".strip()

# Where the environment sets PYTHONDONTWRITEBYTECODE (this machine does), every test process and
# subprocess would compile jax's sources again on import (10 s instead of 5 s for jax and the
# backends); let the first import write the bytecode cache for all the others.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    # One compilation cache for this test run, shared by the xdist workers and every subprocess a
    # test starts (the template's kit runs twice, the sharding workers compile what the tests do).
    import atexit
    import shutil
    import tempfile

    _cache = tempfile.mkdtemp(prefix="envhub-tests-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.3")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
