"""``XMiniGridEnvironment``: one XLand-MiniGrid environment (or a batch of them) behind the envhub API.

xminigrid's auto-reset wrappers are not used: envhub's JAX base (``envhub.JaxEnvironment``) does the
batch and the same-step reset, with ``final_obs``. xminigrid keeps its own time limit (``max_steps``).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from xminigrid import benchmarks, registration
from xminigrid.core.constants import NUM_COLORS, NUM_TILES
from xminigrid.types import StepType

import envhub
from envhub.plugin import (
    Bounds,
    EnvUnavailableError,
    InvalidArgumentError,
    JaxState,
    JaxStep,
    draw_each,
    positive_int,
    spaces,
    take_time_limit,
)

#: The kwargs of XLand-MiniGrid environments that pick their rules and goal.
RULESET_KWARGS = ("benchmark", "ruleset_id", "ruleset")


class XMiniGridEnvironment(envhub.JaxEnvironment[Any, Any, Any]):
    """One xminigrid environment: ``reset``/``step`` of xminigrid, its flags mapped onto envhub's.

    Args:
        name: An id of ``xminigrid.registered_environments()``.
        params: xminigrid ``EnvParams`` replacing the registered ones (kwargs still update them).
        max_episode_steps: xminigrid's ``max_steps`` (an alias): its time limit, reported as truncation.
        benchmark: XLand only: a benchmark name (``benchmarks.registered_benchmarks()``) or a loaded
            ``Benchmark``. With ``ruleset_id`` every episode plays that ruleset; without, every episode
            samples its own from the benchmark (meta-RL).
        ruleset: XLand only: one ``xminigrid.types.RuleSet`` for every episode.
        reset_mode, reset_spares, num_envs: see ``envhub.JaxEnvironment``.
        **kwargs: fields of the environment's params (``height``, ``width``, ``view_size``, ...).
    """

    def __init__(
        self,
        name: str,
        *,
        params: Any = None,
        benchmark: Any = None,
        ruleset_id: int | None = None,
        ruleset: Any = None,
        num_envs: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        **kwargs: Any,
    ):
        limit = take_time_limit(kwargs, "max_steps", None)
        if limit is not None:
            kwargs["max_steps"] = positive_int(
                "max_episode_steps", limit, where=f"(xminigrid's max_steps) for xminigrid/{name}"
            )
        self.name = name
        self.xminigrid_env, self.params = _build(name, params, kwargs)
        self.params, self.benchmark = _rulesets(name, self.params, benchmark, ruleset_id, ruleset)
        self._default_params = _data_params(self.params, self.benchmark)
        shapes = jax.eval_shape(self._reset_one, jax.random.key(0))[1]
        super().__init__(  # no time limit of the base's: xminigrid counts its own (params.max_steps)
            observation_space=_obs_space(shapes),
            action_space=spaces.Discrete(self.xminigrid_env.num_actions(self.params)),
            num_envs=num_envs,
            reset_mode=reset_mode,
            reset_spares=reset_spares,
        )

    @property
    def metadata(self) -> dict[str, Any]:
        meta = {
            **super().metadata,
            "time_limit": self.params.max_steps,
            "library": f"xminigrid {importlib.metadata.version('xminigrid')}",
        }
        if hasattr(self.params, "ruleset"):  # XLand
            meta["rulesets"] = "sampled from the benchmark per episode" if self.benchmark is not None else "fixed"
        return meta

    render_modes = ("rgb_array",)

    def _render(self, state: JaxState[Any], index: int | None) -> Any:
        return draw_each(self._draw, jax.device_get(state.env), self.num_envs, index)

    def _draw(self, timestep: Any) -> np.ndarray:
        params = self.params.replace(render_mode="rgb_array")
        return np.asarray(self.xminigrid_env.render(params, timestep), np.uint8)

    @property
    def default_params(self) -> dict[str, Any]:
        """The traceable part of xminigrid's params: ``max_steps`` (int32) and, for XLand without a benchmark to
        sample from, ``ruleset`` (an ``xminigrid.types.RuleSet``: a level). Shapes (``height``, ``width``,
        ``view_size``) and ``grid_type`` stay ``make``'s kwargs."""
        return self._default_params

    @property
    def params_bounds(self) -> Bounds:
        """An episode lasts at least one step."""
        return Bounds(max_steps=(1, None))

    # --- one environment, as envhub's JAX base needs it ----------------------------------------

    def _xminigrid_params(self, params: dict[str, Any] | None) -> Any:
        """xminigrid's ``EnvParams`` with one env's params written in (a traced ``max_steps`` works: xminigrid only
        compares the step count with it and divides by it)."""
        return self.params if params is None else self.params.replace(**params)

    def _reset_one(self, key: jax.Array, data: dict[str, Any] | None = None) -> tuple[Any, Any]:
        params = self._xminigrid_params(data)
        if self.benchmark is not None:  # a ruleset of the benchmark per episode
            key, ruleset_key = jax.random.split(key)
            params = params.replace(ruleset=self.benchmark.sample_ruleset(ruleset_key))
        timestep = self.xminigrid_env.reset(params, key)  # the state is xminigrid's own TimeStep
        return timestep, timestep.observation

    def _step_one(self, key: jax.Array, state: Any, action: Any, data: dict[str, Any] | None = None) -> JaxStep:
        timestep = self.xminigrid_env.step(self._xminigrid_params(data), state, action)  # xminigrid's step takes no key
        last = timestep.step_type == StepType.LAST
        terminated = last & (timestep.discount == 0.0)  # discount 0: a terminal state (a goal reached)
        truncated = last & (timestep.discount != 0.0)  # LAST with discount 1: max_steps reached
        return JaxStep(
            state=timestep,
            obs=timestep.observation,
            reward=timestep.reward,
            terminated=terminated,
            truncated=truncated,
            info={},
        )


def _data_params(params: Any, benchmark: Any) -> dict[str, Any]:
    """``default_params``: what of xminigrid's ``EnvParams`` can be traced (its pytree leaves are only ``ruleset``)."""
    data: dict[str, Any] = {"max_steps": jnp.asarray(params.max_steps, jnp.int32)}
    if hasattr(params, "ruleset") and benchmark is None:
        data["ruleset"] = jax.tree.map(jnp.asarray, params.ruleset)
    return data


def _build(name: str, params: Any, kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """xminigrid's environment and params: as ``xminigrid.make``, but kwargs reach ``default_params``
    (so a new ``height`` also gets its default ``max_steps``)."""
    spec = registration._REGISTRY[name]  # what xminigrid.make reads
    env = registration.load(spec.entry_point)()
    base = params if params is not None else env.default_params(**spec.kwargs)
    fields = sorted(f.name for f in dataclasses.fields(base))
    unknown = sorted(set(kwargs) - set(fields))
    if unknown:
        xland = " or benchmark/ruleset_id/ruleset" if "ruleset" in fields else ""
        raise InvalidArgumentError(
            f"{unknown[0]}={kwargs[unknown[0]]!r} for xminigrid/{name} is not one of its params: "
            f"pass one of {fields}, max_episode_steps{xland}, or params=."
        )
    if params is not None:
        return env, params.replace(**kwargs)
    return env, env.default_params(**{**spec.kwargs, **kwargs})


def _rulesets(name: str, params: Any, benchmark: Any, ruleset_id: Any, ruleset: Any) -> tuple[Any, Any]:
    """``(params, benchmark)``: params with the chosen ruleset, and the benchmark to sample per episode (or None)."""
    given = {k: v for k, v in zip(RULESET_KWARGS, (benchmark, ruleset_id, ruleset)) if v is not None}
    if given and not hasattr(params, "ruleset"):
        key = next(iter(given))
        raise InvalidArgumentError(
            f"{key}={given[key]!r} for xminigrid/{name}: rulesets apply to the XLand-MiniGrid-* environments only; omit it."
        )
    if ruleset is not None and (benchmark is not None or ruleset_id is not None):
        raise InvalidArgumentError(f"ruleset= for xminigrid/{name} is one ruleset: pass it or benchmark=, not both.")
    if ruleset is not None:
        return params.replace(ruleset=ruleset), None
    if benchmark is None:
        if ruleset_id is not None:
            raise InvalidArgumentError(
                f"ruleset_id={ruleset_id!r} for xminigrid/{name} indexes a benchmark: pass benchmark= too "
                f"(one of {benchmarks.registered_benchmarks()})."
            )
        return params, None
    bench = load_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    if ruleset_id is None:
        return params, bench
    count = bench.num_rulesets()
    if isinstance(ruleset_id, bool) or not isinstance(ruleset_id, (int, np.integer)) or not 0 <= ruleset_id < count:
        raise InvalidArgumentError(
            f"ruleset_id={ruleset_id!r} for xminigrid/{name}: use an int in [0, {count}) (the benchmark's rulesets), "
            "or omit it to sample one per episode."
        )
    return params.replace(ruleset=bench.get_ruleset(int(ruleset_id))), None


def load_benchmark(name: str) -> Any:
    """xminigrid's benchmark ``name``, from its data folder; xminigrid downloads it there on first use."""
    known = benchmarks.registered_benchmarks()
    if name not in known:
        raise InvalidArgumentError(f"benchmark={name!r} is not an xminigrid benchmark: use one of {known}.")
    path = os.path.join(benchmarks.DATA_PATH, benchmarks.NAME2HFFILENAME[name])
    try:
        return benchmarks.load_benchmark(name)
    except (OSError, EOFError) as exc:  # no network (urllib's URLError is an OSError), or a partial file
        raise EnvUnavailableError(
            f"xminigrid benchmark {name!r}",
            f"xminigrid could not load it from {path} nor download it from huggingface.co "
            f"({type(exc).__name__}: {exc}); run xminigrid.load_benchmark({name!r}) once with network access, "
            "or copy the file there (XLAND_MINIGRID_DATA sets the folder).",
        ) from exc


def _obs_space(shapes: Any) -> spaces.Space:
    """Grid views ``(V, V, 2)`` of (tile, colour) ids are bounded by xminigrid's tables; anything else is unbounded."""
    if isinstance(shapes, jax.ShapeDtypeStruct) and shapes.shape[-1:] == (2,) and shapes.dtype == np.uint8:
        return spaces.Box(0, np.array([NUM_TILES - 1, NUM_COLORS - 1]), shapes.shape, np.uint8)
    boxes = jax.tree.map(lambda s: spaces.Box(-np.inf, np.inf, s.shape, s.dtype), shapes)
    return boxes if isinstance(boxes, spaces.Box) else spaces.Tree(boxes)
