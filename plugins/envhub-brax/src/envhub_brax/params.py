"""Physical parameters as data: gravity, body masses, sliding friction and actuator gains of brax's ``System``.

brax's ``System`` is an MJX ``Model`` with brax's own copies of some fields for its other pipelines, so each
parameter is written into both (``opt.gravity`` and ``gravity``; ``body_mass`` and ``link.inertia.mass``;
``actuator_gainprm`` and ``actuator.gain``): every pipeline (mjx, generalized, positional, spring) sees it.
Contact friction comes from MJX's collision (``geom_friction``) on every pipeline.
"""

from __future__ import annotations

import copy
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

#: What values each leaf takes (``envhub.Environment.params_bounds``).
BOUNDS = {"params['body_mass']": (0.0, None), "params['geom_friction']": (0.0, None)}


class SystemParams:
    """The params of one brax ``System``: its defaults, and the ``System`` a params value gives."""

    def __init__(self, sys: Any):
        mj = sys.mj_model
        self.defaults = {
            "gravity": jnp.asarray(sys.opt.gravity),  # (3,)
            "body_mass": jnp.asarray(sys.body_mass),  # (nbody,), MuJoCo's body ids (0: the world)
            "geom_friction": jnp.asarray(sys.geom_friction[:, 0]),  # (ngeom,) sliding friction
            "actuator_gain": jnp.asarray(sys.actuator_gainprm[:, 0]),  # (nu,) gain (a servo's kp)
        }
        gain, bias = np.asarray(mj.actuator_gainprm[:, 0]), np.asarray(mj.actuator_biasprm[:, 1])
        # A position servo (MuJoCo's <position>: bias -kp*q) keeps its bias tied to its gain, as brax's and
        # playground's randomizations do; brax's own actuators exist for joint transmissions only.
        self._biased = np.asarray(mj.actuator_biastype) != 0
        self._servo = self._biased & (gain != 0) & np.isclose(bias, -gain)
        self._joint = np.asarray(mj.actuator_trntype) == 0  # mujoco.mjtTrn.mjTRN_JOINT

    def system(self, sys: Any, params: dict[str, jax.Array]) -> Any:
        """``sys`` with ``params`` (one env's) written into MJX's fields and brax's copies of them."""
        gravity, mass, gain = params["gravity"], params["body_mass"], params["actuator_gain"]
        bias = sys.actuator_biasprm.at[:, 1].set(jnp.where(self._servo, -gain, sys.actuator_biasprm[:, 1]))
        actuator = sys.actuator.replace(gain=gain[self._joint], bias_q=(bias[:, 1] * self._biased)[self._joint])
        return sys.replace(
            gravity=gravity,
            opt=sys.opt.replace(gravity=gravity),
            body_mass=mass,
            link=sys.link.replace(inertia=sys.link.inertia.replace(mass=mass[1:])),
            geom_friction=sys.geom_friction.at[:, 0].set(params["geom_friction"]),
            actuator_gainprm=sys.actuator_gainprm.at[:, 0].set(gain),
            actuator_biasprm=bias,
            actuator=actuator,
        )


def with_system(env: Any, sys: Any) -> Any:
    """A shallow copy of brax's ``env`` (through its wrappers) whose ``sys`` is ``sys``: traced with it, the
    env's ``pipeline_init``/``pipeline_step`` and observations read these params; ``env`` is left as it was."""
    new = copy.copy(env)
    if "sys" in getattr(env, "__dict__", {}):
        new.sys = sys
    elif hasattr(env, "env"):  # a brax Wrapper: its sys is its inner env's
        new.env = with_system(env.env, sys)
    else:
        raise TypeError(f"{type(env).__name__} holds no brax System (sys) to write params into")
    return new


def system_params(env: Any) -> SystemParams | None:
    """The params of brax's ``env``; ``None`` where it has no MuJoCo-built ``System`` (``fast``: no physics)."""
    sys = getattr(env, "sys", None)
    return None if getattr(sys, "mj_model", None) is None else SystemParams(sys)
