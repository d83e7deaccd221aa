"""envhub backend for XLand-MiniGrid: every ``xminigrid.registered_environments()`` id, rulesets as make kwargs.

Built on ``envhub.JaxEnvironment``: the batch and same-step auto-reset are the core's; xminigrid's
own time limit (``max_steps``) is reported as truncation.

xminigrid is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import functools
from typing import Any

import envhub
import envhub.plugin

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# How the conformance kit drives xminigrid environments (fields of envhub.testing.Options, "*" for all).
CHECK_OPTIONS: dict[str, dict[str, Any]] = {
    # params: no float leaf for the kit to scale; a time limit of 3 shows in its short rollout at once.
    "*": {"time_limit_kwarg": "max_episode_steps", "params_variant": {"max_steps": 3}},
    # The agent starts at a fixed cell facing a fixed way in an empty room: every reset looks alike,
    # and nothing in it depends on the key.
    "MiniGrid-Empty-5x5": {"keys_matter": False, "reset_obs_can_repeat": True},
    "MiniGrid-Empty-6x6": {"keys_matter": False, "reset_obs_can_repeat": True},
    "MiniGrid-Empty-8x8": {"keys_matter": False, "reset_obs_can_repeat": True},
    "MiniGrid-Empty-16x16": {"keys_matter": False, "reset_obs_can_repeat": True},
}


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every id of xminigrid's registry (reading it builds nothing)."""
    from xminigrid import registration

    for name in registration.registered_environments():
        kind = "XLand meta-RL rulesets" if name.startswith("XLand-") else "MiniGrid"
        register(
            name,
            functools.partial(make_xminigrid_env, name),
            batching="native",
            description=f"xminigrid ({kind}, JAX-native)",
            check_options=envhub.check_options_for(CHECK_OPTIONS, name),
            kwargs=functools.partial(accepted_kwargs, name),
        )


def make_xminigrid_env(name: str, num_envs: int | None = None, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build xminigrid ``name``; see ``XMiniGridEnvironment`` for ``max_episode_steps``, ``benchmark``,
    ``ruleset_id``, ``ruleset``, ``params``, ``reset_mode``, ``reset_spares`` and params fields."""
    from envhub_xminigrid.environment import XMiniGridEnvironment

    return XMiniGridEnvironment(name, num_envs=num_envs, **kwargs)


# Params fields xminigrid does not check: a grid needs its walls and a cell inside them (smaller ones end in an
# IndexError or a negative shape inside xminigrid), a view at least the agent's cell. A side is at most MAX_SIDE:
# far above any real grid (a 2048x2048 grid steps in under 1 GB), and a typo such as height=10**9 is refused by
# make instead of allocating until memory runs out.
MAX_SIDE = 2048
FIELD_BOUNDS = {"height": (3, MAX_SIDE), "width": (3, MAX_SIDE), "view_size": (1, MAX_SIDE)}


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("xminigrid/<name>", ...)`` takes: ``params``, the rulesets, every params field, envhub's."""
    import dataclasses

    from xminigrid import registration

    spec = registration._REGISTRY[name]  # what xminigrid.make reads
    params = registration.load(spec.entry_point)().default_params(**spec.kwargs)
    fields = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    limit = fields.pop("max_steps", None)
    table = {
        "params": envhub.Kwarg(type(params) | None, None, "xminigrid EnvParams replacing the defaults"),
        **{
            k: envhub.Kwarg(envhub.plugin.infer_type(v), v, "xminigrid params field", bounds=FIELD_BOUNDS.get(k))
            for k, v in fields.items()
        },
        **envhub.plugin.jax_kwargs(None if limit is None else int(limit), native="max_steps"),
    }
    if "ruleset" not in fields:
        why = "rulesets apply to the XLand-MiniGrid-* environments; this MiniGrid one has a fixed task"
        return {**table, **{k: envhub.Kwarg(refused=why) for k in ("benchmark", "ruleset_id", "ruleset")}}
    table.pop("ruleset")  # XLand: the ruleset comes from these
    table["benchmark"] = envhub.Kwarg(doc="an xminigrid benchmark name or object: a ruleset sampled per episode")
    table["ruleset_id"] = envhub.Kwarg(int | None, None, "play this ruleset of the benchmark every episode")
    table["ruleset"] = envhub.Kwarg(doc="an xminigrid RuleSet to play every episode")
    return table


__all__ = ["CHECK_OPTIONS", "envhub_register_envs", "make_xminigrid_env"]
