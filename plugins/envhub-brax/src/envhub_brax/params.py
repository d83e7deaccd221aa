"""Physical parameters as data: gravity, body masses, sliding friction and actuator gains of brax's ``System``.

The four fields, their bounds and how they enter MJX's fields are ``envhub.plugin.MjxParams``' (shared with
envhub-playground). brax's ``System`` is an MJX ``Model`` with brax's own copies of some fields for its other
pipelines, so each parameter is also written into those (``gravity``; ``link.inertia.mass``; ``actuator.gain``
and ``bias_q``): every pipeline (mjx, generalized, positional, spring) sees it. Contact friction comes from MJX's
collision (``geom_friction``) on every pipeline.
"""

from __future__ import annotations

import copy
from typing import Any

import jax
import numpy as np

from envhub.plugin import MjxParams


class SystemParams(MjxParams):
    """The params of one brax ``System``: its defaults, and the ``System`` a params value gives."""

    def __init__(self, sys: Any):
        super().__init__(sys, sys.mj_model)
        # brax's own actuators exist for joint transmissions only.
        self._joint = np.asarray(sys.mj_model.actuator_trntype) == 0  # mujoco.mjtTrn.mjTRN_JOINT

    def system(self, sys: Any, params: dict[str, jax.Array]) -> Any:
        """``sys`` with ``params`` (one env's) written into MJX's fields and brax's copies of them."""
        new = self.model(sys, params)
        gain, bias = params["actuator_gain"], new.actuator_biasprm[:, 1]
        actuator = sys.actuator.replace(gain=gain[self._joint], bias_q=(bias * self.biased)[self._joint])
        mass = params["body_mass"][1:]  # brax's links: every body but the world
        return new.replace(
            gravity=params["gravity"],
            link=sys.link.replace(inertia=sys.link.inertia.replace(mass=mass)),
            actuator=actuator,
        )

    def env_with(self, env: Any, params: dict[str, jax.Array]) -> Any:
        """A copy of brax's ``env`` whose ``sys`` holds ``params`` (``envhub.plugin.WithMjxParams.with_params``)."""
        return with_system(env, self.system(env.sys, params))


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
