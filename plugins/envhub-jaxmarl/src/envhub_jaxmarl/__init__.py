"""envhub backend for JaxMARL: its simultaneous multi-agent environments, pure JAX, on envhub's JAX base.

Every id of jaxmarl's registry is listed; the families whose episode ends the plugin can tell apart
(termination or time limit) run (``FAMILIES``), the others are listed unavailable with the reason.
jaxmarl is imported lazily, inside the hook and the factories, so ``envhub list`` stays fast.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Literal

import envhub
import envhub.plugin

# The envhub plugin API this plugin is written for: envhub refuses it, with a clear reason, if it
# cannot load plugins of this API.
ENVHUB_API = 1

# How each runnable id ends its episodes (envhub_jaxmarl.environment says what each family means).
FAMILIES = {
    **{name: "mpe" for name in (
        "MPE_simple_v3", "MPE_simple_tag_v3", "MPE_simple_world_comm_v3", "MPE_simple_spread_v3",
        "MPE_simple_crypto_v3", "MPE_simple_speaker_listener_v4", "MPE_simple_push_v3", "MPE_simple_adversary_v3",
        "MPE_simple_reference_v3", "MPE_simple_facmac_v1", "MPE_simple_facmac_3a_v1", "MPE_simple_facmac_6a_v1",
        "MPE_simple_facmac_9a_v1",
    )},
    "overcooked": "overcooked",
    "overcooked_v2": "overcooked",
    "SMAX": "smax",
    "HeuristicEnemySMAX": "smax",
    "hanabi": "hanabi",
    "coin_game": "coin_game",
}  # fmt: skip

# Why the other ids of jaxmarl 0.2.0's registry do not run here.
NOT_MAPPED = "envhub-jaxmarl does not map it yet (its episode ends are not told apart into terminated and truncated)"
UNAVAILABLE = {
    "LearnedPolicyEnemySMAX": "it needs a trained enemy policy and its parameters (jaxmarl's policy= and params=); "
    "use SMAX or HeuristicEnemySMAX",
    "storm": "jaxmarl 0.2.0's InTheGrid fails on reset (KeyError: 0: its agents are numbered, not named)",
    "storm_2p": "its agents are numbered (0, 1), not named, and its observations are tuples; " + NOT_MAPPED,
    "storm_np": "its agents are numbered (0, 1), not named; " + NOT_MAPPED,
    "switch_riddle": NOT_MAPPED,
    "jaxnav": NOT_MAPPED,
    **{name: "MABrax: " + NOT_MAPPED + "; use brax/ for the single-agent robots" for name in (
        "ant_4x2", "halfcheetah_6x1", "hopper_3x1", "humanoid_9|8", "walker2d_2x3",
    )},
}  # fmt: skip
ROBOTARIUM = "it needs the jaxrobotarium package, which jaxmarl 0.2.0 imports from a git submodule that is not on PyPI"


@envhub.hookimpl
def envhub_register_envs(register: Any) -> None:
    """Register every id of jaxmarl's registry (nothing is built)."""
    from envhub_jaxmarl.environment import jaxmarl

    for name in jaxmarl.registration.registered_envs:
        if name not in FAMILIES:
            register(name, None, unavailable=UNAVAILABLE.get(name, ROBOTARIUM if "Robotarium" in name else NOT_MAPPED))
            continue
        register(
            name,
            functools.partial(make_jaxmarl_env, name),
            batching="native",
            description="JaxMARL (JAX-native, multi-agent)",
            check_options={"time_limit_kwarg": "max_episode_steps"},
            kwargs=functools.partial(accepted_kwargs, name),
        )


def make_jaxmarl_env(name: str, **kwargs: Any) -> envhub.Environment[Any, Any, Any]:
    """Build jaxmarl ``name``: ``num_envs``, ``max_episode_steps`` (steps per episode: it sets jaxmarl's
    ``max_steps`` where the env has one), ``reset_mode``/``reset_spares`` go to envhub; the other kwargs to
    jaxmarl's constructor."""
    from envhub_jaxmarl.environment import JaxMarlEnvironment

    return JaxMarlEnvironment(name, FAMILIES[name], **kwargs)


# Ranges jaxmarl does not check (outside them: an IndexError, a negative shape or a shape mismatch inside jaxmarl, at
# make or at the first step). MPE's physics is 2-D; local_ratio weighs local against global reward; a time step of 0
# or less freezes or reverses the physics without an error.
BOUNDS: dict[str, envhub.plugin.Range] = {
    "dt": (envhub.Kwarg.above(0.0), None),
    **dict.fromkeys(("num_landmarks", "num_good_agents", "num_adversaries", "num_obs", "dim_c"), (0, None)),
    "dim_p": (2, 2),
    "local_ratio": (0.0, 1.0),
    **dict.fromkeys(("num_colors", "num_ranks", "hand_size", "max_info_tokens", "max_life_tokens"), (1, None)),
    **dict.fromkeys(("num_inner_steps", "num_outer_steps"), (1, None)),
}

# jaxmarl builds these with a function of no arguments (SimpleFacmacMPE3a() ...): a kwarg is its TypeError.
NO_KWARGS = {"MPE_simple_facmac_3a_v1", "MPE_simple_facmac_6a_v1", "MPE_simple_facmac_9a_v1"}


def accepted_kwargs(name: str) -> dict[str, envhub.Kwarg]:
    """What ``make("jaxmarl/<name>", ...)`` takes: the env class's constructor arguments and envhub's."""
    from envhub_jaxmarl.environment import default_time_limit, env_classes

    table: dict[str, envhub.Kwarg] = {}
    for cls in env_classes(name) if name not in NO_KWARGS else ():
        table = {**envhub.plugin.from_signature(cls)[0], **table}
    table.pop("max_steps", None)  # jaxmarl's counts one step less on MPE and SMAX: max_episode_steps sets it
    for kwarg in set_by_the_env(env_classes(name)[0]) & set(table):
        why = f"jaxmarl/{name} sets {kwarg} itself (passing it is jaxmarl's 'multiple values' TypeError): leave it out"
        table[kwarg] = envhub.Kwarg(refused=why)
    for kwarg in set(BOUNDS) & set(table):
        table[kwarg] = dataclasses.replace(table[kwarg], bounds=BOUNDS[kwarg])
    if "action_type" in table:  # MPE: anything else is jaxmarl's NotImplementedError; SMAX: the plugin maps the
        # discrete actions only (its "continuous" ones end in an AttributeError in the plugin's action masks)
        kinds = Literal["Discrete", "Continuous"] if FAMILIES[name] == "mpe" else Literal["discrete"]
        table["action_type"] = dataclasses.replace(table["action_type"], type=kinds)
    return {**table, **envhub.plugin.jax_kwargs(default_time_limit(name, FAMILIES[name]))}


def set_by_the_env(cls: type) -> set[str]:
    """The base-class arguments ``cls`` (or a class between it and the base) passes itself, by keyword, to its base's
    ``__init__``: ``from_signature`` lists them (e.g. MPE's ``dim_c``, ``agents``, ``colour``), but they cannot be
    given (read from the source: jaxmarl declares them nowhere else)."""
    import ast
    import inspect
    import textwrap

    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
        except (OSError, TypeError, SyntaxError):
            continue
        own = set(inspect.signature(init).parameters)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "__init__":
                names |= {k.arg for k in node.keywords if k.arg and k.arg not in own}
    return names
