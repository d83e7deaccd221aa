"""What values the fields of gymnax's ``EnvParams`` take (``params_bounds``): gymnax itself checks none.

One table for every gymnax env, by field name (a field an env lacks is not bounded there). Physical constants
first: what the dynamics divide by (a total mass, a pole's length, a pendulum's mass and length, a moment of
inertia, a time step) is > 0, a NaN or an infinity otherwise; other masses, lengths, speed and force limits and
noise scales are >= 0 (a negative one reverses or breaks the physics silently); probabilities lie in [0, 1];
an episode lasts at least one step; MinAtar's timers are >= 0 and Seaquest's oxygen (a divisor) >= 1. Gravity
and positions take any value.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from envhub.plugin import Bounds, Range

POSITIVE: Range = (Bounds.above(0.0), None)
NOT_NEGATIVE: Range = (0.0, None)

FIELDS: dict[str, Range] = {
    # classic control (CartPole, Pendulum, Acrobot) and misc (Reacher, Swimmer): divisors
    **dict.fromkeys(("total_mass", "length", "m", "l", "link_moi", "tau", "dt"), POSITIVE),
    **dict.fromkeys(
        (
            "masscart",
            "masspole",
            "polemass_length",
            "link_mass_1",
            "link_mass_2",
            "link_length_1",
            "link_length_2",
            "link_com_pos_1",
            "link_com_pos_2",
            "force_mag",
            "force",
            "power",
            "max_force",
            "max_torque",
            "torque_scale",
            "max_speed",
            "max_vel_1",
            "max_vel_2",
            "torque_noise_max",
            "x_threshold",
            "theta_threshold_radians",
            "circle_radius",
            "goal_radius",
            "sigma_p",
            "sigma_l",
        ),
        NOT_NEGATIVE,
    ),
    **dict.fromkeys(("fail_prob", "reward_prob"), (0.0, 1.0)),
    "max_steps_in_episode": (1, None),
    # MinAtar's timers and speeds (steps between events), and bsuite's sizes
    **dict.fromkeys(
        (
            "ramp_interval",
            "init_spawn_speed",
            "init_move_interval",
            "shot_cool_down",
            "enemy_move_interval",
            "enemy_shot_interval",
            "diver_move_interval",
            "diver_spawn_speed",
            "player_speed",
        ),
        (0, None),
    ),
    **dict.fromkeys(("max_oxygen", "memory_length", "chain_length"), (1, None)),
}


def params_bounds(params: Any) -> Bounds:
    """The ``Bounds`` of gymnax's ``params`` (an ``EnvParams``): ``FIELDS`` for the fields it has."""
    return Bounds({f.name: FIELDS[f.name] for f in dataclasses.fields(params) if f.name in FIELDS})
