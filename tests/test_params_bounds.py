"""``params_bounds`` (``envhub.core.bounds``): a typed ``Bounds`` keyed as ``default_params`` is, one range rule at
``make`` and at ``init``/``reset``/``set_params`` (an exclusive low end included), plugin API 1's leaf names still
read with a ``DeprecationWarning``, a backend's malformed ``Bounds`` named, and the kit's params check holding a
backend's defaults to its bounds. Most rows call the one check directly: no program is compiled."""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import pytest

import envhub
from envhub import spaces, testing
from envhub.core.params import checked_params
from envhub.errors import InvalidArgumentError, PluginLoadError
from envhub.plugin import Bounds, JaxEnvironment, JaxStep, Kwarg


@dataclasses.dataclass(frozen=True)
class Params:
    """Params as a dataclass pytree, as gymnax's ``EnvParams``: leaves named ``params.<field>``."""

    mass: float = 1.0
    dt: float = 0.05
    links: tuple[float, ...] = (1.0, 2.0)


jax.tree_util.register_dataclass(Params, data_fields=["mass", "dt", "links"], meta_fields=[])

NESTED = {"gravity": -9.8, "pole": {"length": 0.5, "mass": 0.1}}


def nested(**pole: float) -> dict[str, Any]:
    return {**NESTED, "pole": {**NESTED["pole"], **pole}}


#: (case, default, bounds, params, message): each an InvalidArgumentError from the one check.
OUT_OF_BOUNDS = [
    ("a dict key", NESTED, Bounds(gravity=(None, 0.0)), {**NESTED, "gravity": 1.0}, r"^params\['gravity'\] of 't/T' has the value 1.0; it must be <= 0.0 \(env.params_bounds\)\. Give values in that range\.$"),
    ("a level down", NESTED, Bounds(pole={"mass": (0.0, None)}), nested(mass=-1.0), r"params\['pole'\]\['mass'\] of 't/T' has the value -1.0; it must be >= 0.0"),
    ("a nested Bounds", NESTED, Bounds(pole=Bounds(mass=(0.0, None))), nested(mass=-1.0), r"params\['pole'\]\['mass'\] .* -1.0"),
    ("a range on a node", NESTED, Bounds(pole=(0.0, None)), nested(length=-0.5), r"params\['pole'\]\['length'\] .* -0.5; it must be >= 0.0"),
    ("a dataclass field", Params(), Bounds(mass=(0.0, 10.0)), Params(mass=11.0), r"params.mass of 't/T' has the value 11.0; it must be from 0.0 to 10.0"),
    ("an exclusive low end", Params(), Bounds(dt=(Bounds.above(0.0), None)), Params(dt=0.0), r"params.dt .* has the value 0.0; it must be > 0.0"),
    ("a list index", Params(), Bounds(links={1: (0.0, None)}), Params(links=(1.0, -2.0)), r"params.links\[1\] .* -2.0"),
    ("one env of a batch", Params(), Bounds(mass=(0.0, None)), Params(mass=jnp.array([1.0, -3.0])), r"params.mass .* has the value -3.0"),
    ("API 1's exclusive low end", Params(), {"params.dt": (Kwarg.above(0.0), None)}, Params(dt=0.0), r"params.dt .* 0.0; it must be > 0.0"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("default", "bounds", "params", "match"), [r[1:] for r in OUT_OF_BOUNDS], ids=[r[0] for r in OUT_OF_BOUNDS]
)
@pytest.mark.filterwarnings("ignore:params_bounds of 't/T' is keyed by leaf names:DeprecationWarning")
def test_a_value_out_of_its_bounds_is_refused_naming_the_leaf_and_the_rule(default, bounds, params, match):
    with pytest.raises(InvalidArgumentError, match=match):
        checked_params("t/T", default, params, 2, bounds)
    checked_params("t/T", default, default, 2, bounds)  # the defaults are within


def test_values_at_an_included_end_pass_and_traced_values_are_not_checked():
    bounds = Bounds(gravity=(-9.8, 0.0), pole={"mass": (0.0, None)})
    checked_params("t/T", NESTED, nested(mass=0.0), None, bounds)
    jax.jit(lambda p: checked_params("t/T", NESTED, p, None, bounds))(nested(mass=-1.0))  # values are free under jit


def test_api_1_leaf_names_are_still_read_with_a_deprecation_warning_naming_bounds():
    old = {"params['pole']['mass']": (0.0, None), "params['wind']": (0.0, 1.0)}  # names no leaf: passed over, as before
    with pytest.warns(
        DeprecationWarning, match=r"keyed by leaf names .* give an envhub.plugin.Bounds keyed as default"
    ):
        with pytest.raises(InvalidArgumentError, match=r"params\['pole'\]\['mass'\] .* -1.0; it must be >= 0.0"):
            checked_params("t/T", NESTED, nested(mass=-1.0), None, old)
    with pytest.warns(DeprecationWarning, match="plugin API 2"):
        checked_params("t/T", NESTED, NESTED, None, old)


#: (case, what a plugin wrote, message): a malformed range is refused where the Bounds is made.
MALFORMED = [
    ("not a pair", lambda: Bounds(mass=0.0), r"Bounds: mass=0.0 is not a range: give \(low, high\)"),
    ("three ends", lambda: Bounds(mass=(0, 1, 2)), r"is not a range"),
    ("low above high", lambda: Bounds(pole={"mass": (1.0, 0.0)}), r"Bounds: pole.mass=\(1.0, 0.0\): its low end is above its high end"),
    ("a string end", lambda: Bounds(mass=(None, "1")), r"its end '1' is not a number"),
    ("a bool end", lambda: Bounds(mass=(True, None)), r"its end True is not a number"),
    ("a NaN end", lambda: Bounds(mass=(float("nan"), None)), r"an end is NaN"),
]  # fmt: skip


@pytest.mark.parametrize(("make", "match"), [r[1:] for r in MALFORMED], ids=[r[0] for r in MALFORMED])
def test_a_malformed_bounds_is_refused_where_it_is_made(make, match):
    with pytest.raises(InvalidArgumentError, match=match):
        make()


def test_a_bounds_key_default_params_lacks_is_named_with_the_leaves_it_has():
    match = (
        r"params_bounds of 't/T' bound 'pole.mas', which env.default_params does not have \(its leaves: "
        r"params\['gravity'\], params\['pole'\]\['length'\], params\['pole'\]\['mass'\]\)"
    )
    with pytest.raises(InvalidArgumentError, match=match):
        checked_params("t/T", NESTED, NESTED, None, Bounds(pole={"mas": (0.0, None)}))
    assert Bounds(pole={"mass": (0.0, None)}) == Bounds({"pole": Bounds(mass=(0.0, None))}) != Bounds()
    assert (
        repr(Bounds(dt=(Bounds.above(0.0), None))) == "Bounds(dt=(Bounds.above(0.0), None))"
        and len(Bounds(a=(0, 1))) == 1
    )


class Swing(JaxEnvironment):
    """A pendulum-like toy whose ``dt`` (a make kwarg and a param) must be > 0."""

    def __init__(self, dt: float = 0.05, bounds: Any = None, num_envs: int | None = None):
        self.dt, self.bounds = dt, bounds
        super().__init__(
            observation_space=spaces.Box(-1.0, 1.0, (1,)), action_space=spaces.Discrete(2), num_envs=num_envs
        )

    @property
    def default_params(self) -> Any:
        return {"dt": self.dt}

    @property
    def params_bounds(self) -> Any:
        return Bounds(dt=(Bounds.above(0.0), None)) if self.bounds is None else self.bounds

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        return jnp.zeros(()), jnp.zeros((1,))

    def _step_one(self, key: jax.Array, x: Any, action: Any, params: Any) -> JaxStep:
        x = jnp.clip(x + params["dt"] * (2 * action - 1), -1.0, 1.0)
        return JaxStep(state=x, obs=x[None], reward=jnp.float32(0.0), terminated=False, truncated=False, info={})


def _registry(**swing: Any) -> envhub.Registry:
    class Plugin:
        @envhub.hookimpl
        def envhub_register_envs(self, register: Any) -> None:
            register("Swing-v0", lambda **kw: Swing(**swing, **kw))

    registry = envhub.Registry(autoload=False)
    registry.register_backend("swing", Plugin())
    return registry


def test_make_and_init_hold_a_parameter_kwarg_to_the_same_exclusive_bound():
    registry = _registry()
    with pytest.raises(
        InvalidArgumentError,
        match=r"make\('swing/Swing-v0', \.\.\.\): dt=0.0 is out of range: it must be > 0.0 \(the bounds of the parameter params\['dt'\]\)",
    ):
        registry.make("swing/Swing-v0", dt=0.0)
    env = registry.make("swing/Swing-v0", dt=0.1)
    with pytest.raises(
        InvalidArgumentError, match=r"params\['dt'\] of 'swing/Swing-v0' has the value 0.0; it must be > 0.0"
    ):
        env.init(jax.random.key(0), params={"dt": 0.0})
    with pytest.raises(PluginLoadError, match=r"in params_bounds of 'swing/Swing-v0'.*bound 'dtt'"):
        _registry(bounds=Bounds(dtt=(0.0, None))).make("swing/Swing-v0", dt=0.1)


def test_the_kit_holds_the_defaults_to_the_backends_own_bounds():
    outside = testing.run_check("params", lambda **kw: Swing(dt=-0.05, **kw), testing.Options())
    assert (
        outside.failed
        and "the default params['dt'] is -0.05, outside the env's own params_bounds (> 0.0)" in outside.message
    )
    unknown = testing.run_check("params", lambda **kw: Swing(bounds=Bounds(dtt=(0.0, None)), **kw), testing.Options())
    assert unknown.failed and "bound 'dtt', which env.default_params does not have" in unknown.message


def test_a_plugin_api_1_backend_with_leaf_name_bounds_still_passes_the_kits_params_check():
    old = {"params['dt']": (Kwarg.above(0.0), None)}
    with pytest.warns(DeprecationWarning, match="keyed by leaf names"):
        result = testing.run_check("params", lambda **kw: Swing(bounds=old, **kw), testing.Options())
    assert result.passed, result.message
