"""``envhub.plugin.MjxParams`` and ``WithMjxParams`` (``envhub.core.mjx_params``), the params of MuJoCo models on MJX
that brax and playground share, on a stand-in model (the fields MJX's ``Model`` has, and ``replace``): no MuJoCo."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import jax.numpy as jnp
import numpy as np

from envhub.plugin import Bounds, MjxParams, WithMjxParams


class Fields(SimpleNamespace):
    """What MjxParams reads and replaces of an MJX model."""

    def replace(self, **changes: Any) -> Fields:
        return Fields(**{**vars(self), **changes})


def model_and_mj() -> tuple[Fields, SimpleNamespace]:
    gainprm, biasprm = np.zeros((2, 10), np.float32), np.zeros((2, 10), np.float32)
    gainprm[:, 0], biasprm[1, 1] = 3.0, -3.0  # actuator 0: a motor; 1: a servo of kp 3
    mj = SimpleNamespace(actuator_gainprm=gainprm, actuator_biasprm=biasprm, actuator_biastype=np.array([0, 1]))
    model = Fields(
        opt=Fields(gravity=jnp.array([0.0, 0.0, -9.81])),
        body_mass=jnp.array([0.0, 1.0]),
        geom_friction=jnp.array([[1.0, 0.005, 0.0001]]),
        actuator_gainprm=jnp.asarray(gainprm),
        actuator_biasprm=jnp.asarray(biasprm),
    )
    return model, mj


def test_the_four_fields_are_read_and_written_and_a_servo_bias_follows_its_gain():
    """MuJoCo's <position> actuator (bias -kp*q) keeps kp in both, as playground's randomizers set them."""
    model, mj = model_and_mj()
    params = MjxParams(model, mj)
    d = params.defaults
    assert {k: v.shape for k, v in d.items()} == {
        "gravity": (3,),
        "body_mass": (2,),
        "geom_friction": (1,),
        "actuator_gain": (2,),
    }
    new = params.model(
        model,
        {
            **d,
            "body_mass": d["body_mass"] * 2,
            "geom_friction": jnp.array([0.5]),
            "actuator_gain": jnp.array([5.0, 7.0]),
        },
    )
    np.testing.assert_allclose(new.body_mass, [0.0, 2.0])
    np.testing.assert_allclose(new.geom_friction, [[0.5, 0.005, 0.0001]])  # torsional and rolling friction kept
    np.testing.assert_allclose(new.actuator_gainprm[:, 0], [5.0, 7.0])
    np.testing.assert_allclose(new.actuator_biasprm[:, 1], [0.0, -7.0])
    assert params.bounds == Bounds(body_mass=(0.0, None), geom_friction=(0.0, None))


def test_the_mixin_gives_params_bounds_and_a_copy_that_runs_with_them_or_none_without_a_model():
    model, mj = model_and_mj()

    class Params(MjxParams):
        def env_with(self, env: Any, params: Any) -> Any:
            return {"model": self.model(env["model"], params)}

    class Env(WithMjxParams):
        pass

    env, raw = Env(), {"model": model}
    assert env.default_params is None and env.params_bounds == Bounds() and env.with_params(raw, {"x": 1}) is raw
    env.mjx_params = Params(model, mj)
    assert env.params_bounds == MjxParams.bounds and env.default_params is env.mjx_params.defaults
    assert env.with_params(raw, None) is raw
    copy = env.with_params(raw, {**env.default_params, "gravity": jnp.zeros(3)})
    np.testing.assert_allclose(copy["model"].opt.gravity, 0.0)
    np.testing.assert_allclose(raw["model"].opt.gravity, [0.0, 0.0, -9.81])  # the env itself is untouched
