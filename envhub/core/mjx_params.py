"""Physical params of a MuJoCo model on MJX as data: gravity, body masses, sliding friction and actuator gains.

The four fields MJX backends (brax, playground) show as ``default_params`` (the fields playground's own domain
randomizers vary most), their bounds, and the model one env's params give, written into MJX's fields as those
randomizers write them: a position servo (MuJoCo's ``<position>``: bias ``-kp*q``) keeps its bias tied to its
gain. Duck-typed on the model (MJX's ``Model``, brax's ``System``: MJX's fields and ``replace``), so the core
imports no MuJoCo; a backend with its own copies of these fields (brax) writes those after ``model``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from envhub.core.bounds import Bounds


class MjxParams:
    """The params of one MJX model: ``defaults`` (``default_params``), ``bounds`` (``params_bounds``) and ``model``.

    Args:
        model: The MJX model (``mujoco.mjx.Model``, or brax's ``System``) whose fields give the defaults.
        mj_model: Its ``mujoco.MjModel`` (which actuators are position servos).
    """

    #: Masses and friction are >= 0 (body 0, the world, has mass 0). Gravity takes any direction, and a gain any
    #: sign (a negative one reverses its actuator, as MuJoCo allows).
    bounds = Bounds(body_mass=(0.0, None), geom_friction=(0.0, None))

    def __init__(self, model: Any, mj_model: Any):
        self.defaults = {
            "gravity": jnp.asarray(model.opt.gravity),  # (3,)
            "body_mass": jnp.asarray(model.body_mass),  # (nbody,), MuJoCo's body ids (0: the world)
            "geom_friction": jnp.asarray(model.geom_friction[:, 0]),  # (ngeom,) sliding friction
            "actuator_gain": jnp.asarray(model.actuator_gainprm[:, 0]),  # (nu,) gain (a servo's kp)
        }
        gain, bias = np.asarray(mj_model.actuator_gainprm[:, 0]), np.asarray(mj_model.actuator_biasprm[:, 1])
        #: Actuators with a bias (``biastype`` not none), and among them the position servos (bias ``-gain``).
        self.biased = np.asarray(mj_model.actuator_biastype) != 0
        self.servo = self.biased & (gain != 0) & np.isclose(bias, -gain)

    def model(self, model: Any, params: dict[str, jax.Array]) -> Any:
        """``model`` with ``params`` (one env's) written into MJX's fields."""
        gain = params["actuator_gain"]
        return model.replace(
            opt=model.opt.replace(gravity=params["gravity"]),
            body_mass=params["body_mass"],
            geom_friction=model.geom_friction.at[:, 0].set(params["geom_friction"]),
            actuator_gainprm=model.actuator_gainprm.at[:, 0].set(gain),
            actuator_biasprm=model.actuator_biasprm.at[:, 1].set(
                jnp.where(self.servo, -gain, model.actuator_biasprm[:, 1])
            ),
        )

    def env_with(self, env: Any, params: dict[str, jax.Array]) -> Any:
        """A copy of the backend's ``env`` that runs with ``params`` (one env's); each backend says how (its model's
        place differs): a copy whose model is ``self.model(<its model>, params)``."""
        raise NotImplementedError(f"{type(self).__name__} does not say how its backend's env takes params")


class WithMjxParams:
    """A ``JaxEnvironment`` mixin (listed first) for a backend whose params are an MJX model's: ``default_params`` and
    ``params_bounds`` from its ``mjx_params`` (set it in ``__init__``), or none where that is ``None`` (no physics)."""

    mjx_params: MjxParams | None = None

    @property
    def default_params(self) -> dict[str, jax.Array] | None:
        """``gravity`` (3,), ``body_mass`` (nbody,), ``geom_friction`` (ngeom,: sliding) and ``actuator_gain`` (nu,)
        of the env's MJX model (``envhub.plugin.MjxParams``); ``None`` for an env without one."""
        return None if self.mjx_params is None else self.mjx_params.defaults

    @property
    def params_bounds(self) -> Bounds:
        """Masses and friction are >= 0 (``MjxParams.bounds``)."""
        return Bounds() if self.mjx_params is None else self.mjx_params.bounds

    def with_params(self, env: Any, params: dict[str, jax.Array] | None) -> Any:
        """The backend's ``env``, or (given one env's params, in ``_reset_one``/``_step_one``) a copy of it that runs
        with them (``MjxParams.env_with``)."""
        return env if params is None or self.mjx_params is None else self.mjx_params.env_with(env, params)


__all__ = ["MjxParams", "WithMjxParams"]
