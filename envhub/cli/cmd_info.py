"""``envhub info ID``: an environment's spaces, dtypes, batching, and how it runs."""

from __future__ import annotations

import argparse
import json
from typing import Any

from envhub.cli.common import EXIT_OK, add_env_arguments, make_env

NAME = "info"


def add_arguments(sub: Any) -> argparse.ArgumentParser:
    """Add the ``envhub info`` parser to ``sub`` (argparse subparsers)."""
    return add_env_arguments(sub.add_parser(NAME, help="show an environment's spaces, dtypes and batching"))


def run(args: argparse.Namespace) -> int:
    import jax

    import envhub
    from envhub.core.kwargs import MAKE_KWARGS
    from envhub.host import callback as host_callback
    from envhub.registry.kwargs_check import accepted

    with make_env(args) as env:
        _, ts = jax.eval_shape(env.init, jax.random.key(0))
        metadata = dict(env.metadata)
        prefix = env.id.partition("/")[0]
        plugin = next((b for b in envhub.list_backends() if b.prefix == prefix), None)
        info = {
            "id": env.id,
            "class": type(env.unwrapped).__name__,
            "description": envhub.default_registry().spec(env.id).description,
            "backend": f"{plugin.distribution} {plugin.version}" if plugin else prefix,
            "library": metadata.pop("library", None),
            "jax": jax.__version__,
            "runs_on": "device (pure JAX)"
            if env.is_jax_native
            else f"host (CPU, stepped through {host_callback.kind})",
            "num_envs": env.num_envs,
            "jax_native": env.is_jax_native,
            "vmappable": env.is_jax_native and env.num_envs is None,
            "time_limit": metadata.pop("time_limit", None),
            "params": _params(env.default_params),
            "render_modes": list(env.render_modes),
            "action_space": repr(env.action_space),
            "observation_space": repr(env.observation_space),
            "single_action_space": repr(env.single_action_space),
            "single_observation_space": repr(env.single_observation_space),
            "obs": _describe(ts.obs),
            "info_keys": {k: _describe(v) for k, v in ts.info.items()},
            **metadata,
            "kwargs": _kwargs(accepted(envhub.default_registry().spec(env.id))),
            "make_kwargs": _kwargs(MAKE_KWARGS),
        }
    if args.json:
        print(json.dumps(info, indent=2, default=str))
    else:
        for key, value in info.items():
            if (key.endswith("kwargs") or key == "params") and isinstance(value, dict):
                width = max(map(len, value), default=0)
                print(f"{key:<18} {len(value)}" + "".join(f"\n  {n:<{width}}  {line}" for n, line in value.items()))
            else:
                print(f"{key:<18} {value}")
    return EXIT_OK


def _params(default: Any) -> dict[str, str] | str:
    """``{leaf name: "dtype shape = value"}`` of ``default_params`` (docs/params.md), or why there are none."""
    import jax
    import numpy as np

    from envhub.core.params import as_arrays, leaf_name

    if default is None:
        return "none (default_params is None)"
    shown = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(as_arrays(default))[0]:  # as the state keeps them
        value = np.asarray(leaf)
        text = np.array2string(value, threshold=6, separator=", ")
        shown[leaf_name(path)] = f"{value.dtype}{list(value.shape)} = {text}"
    return shown


def _kwargs(table: dict[str, Any] | None) -> dict[str, str] | str:
    """``{name: "type = default, range  doc"}`` of the kwargs ``table`` declares (refused ones left out)."""
    from envhub.core.kwargs import OTHERS, bounds_rule, describe_one

    if table is None:
        return "not declared: the backend takes any keyword argument (see its README)"
    shown = {}
    for name, kw in table.items():
        if kw.refused:
            continue
        text = f"alias of {kw.alias_of}" if kw.alias_of else describe_one(name, kw).partition(": ")[2]
        text += f", {bounds_rule(kw.bounds)}" if kw.bounds and not kw.alias_of else ""
        shown[name] = f"{text}  ({kw.doc})" if kw.doc and not kw.alias_of else text
    if OTHERS in table:
        shown[OTHERS] = f"any other name, unchecked ({table[OTHERS].doc or 'passed to the backend'})"
    return shown


def _describe(tree: Any) -> Any:
    import jax

    return jax.tree.map(lambda x: f"{x.dtype}{list(x.shape)}", tree)


__all__ = ["NAME", "add_arguments", "run"]
