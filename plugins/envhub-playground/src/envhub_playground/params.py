"""Physical parameters as data: gravity, body masses, sliding friction and actuator gains of the env's MJX model.

The fields playground's own domain randomizers (``registry.get_domain_randomizer``) vary most; written into
``mjx_model`` as they do, into a shallow copy of the env traced with it (the env object is never changed).
"""

from __future__ import annotations

import copy
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

#: What values each leaf takes (``envhub.Environment.params_bounds``).
BOUNDS = {"params['body_mass']": (0.0, None), "params['geom_friction']": (0.0, None)}


class ModelParams:
    """The params of one playground env: their defaults (from its ``mjx_model``), and the model a value gives."""

    def __init__(self, model: Any, mj_model: Any):
        self.defaults = {
            "gravity": jnp.asarray(model.opt.gravity),  # (3,)
            "body_mass": jnp.asarray(model.body_mass),  # (nbody,), MuJoCo's body ids (0: the world)
            "geom_friction": jnp.asarray(model.geom_friction[:, 0]),  # (ngeom,) sliding friction
            "actuator_gain": jnp.asarray(model.actuator_gainprm[:, 0]),  # (nu,) gain (a servo's kp)
        }
        gain, bias = np.asarray(mj_model.actuator_gainprm[:, 0]), np.asarray(mj_model.actuator_biasprm[:, 1])
        # A position servo (bias -kp*q) keeps its bias tied to its gain, as playground's randomizers do.
        self._servo = (np.asarray(mj_model.actuator_biastype) != 0) & (gain != 0) & np.isclose(bias, -gain)

    def model(self, model: Any, params: dict[str, jax.Array]) -> Any:
        """``model`` with ``params`` (one env's) written in."""
        gain = params["actuator_gain"]
        return model.replace(
            opt=model.opt.replace(gravity=params["gravity"]),
            body_mass=params["body_mass"],
            geom_friction=model.geom_friction.at[:, 0].set(params["geom_friction"]),
            actuator_gainprm=model.actuator_gainprm.at[:, 0].set(gain),
            actuator_biasprm=model.actuator_biasprm.at[:, 1].set(
                jnp.where(self._servo, -gain, model.actuator_biasprm[:, 1])
            ),
        )


def model_params(env: Any) -> ModelParams | None:
    """The params of playground's ``env``; ``None`` where it keeps no ``_mjx_model`` of its own to replace."""
    if "_mjx_model" not in getattr(env, "__dict__", {}):
        return None
    return ModelParams(env.mjx_model, env.mj_model)


def with_model(env: Any, model: Any) -> Any:
    """A shallow copy of playground's ``env`` whose ``mjx_model`` is ``model`` (what playground's own
    ``BraxDomainRandomizationVmapWrapper`` swaps in, there by assignment to the env)."""
    new = copy.copy(env)
    new._mjx_model = model
    return new
