"""``positive_int``: the one int >= 1 check of the core, the wrappers and the plugins."""

from __future__ import annotations

import re

import numpy as np
import pytest

from envhub.errors import InvalidArgumentError
from envhub.plugin import positive_int
from envhub.testing.toy_envs import Corridor
from envhub.wrappers import ActionRepeat, FrameStack, TimeLimit


def test_positive_int_returns_the_value_and_none_only_where_it_means_something():
    assert positive_int("n", 3) == 3
    assert positive_int("n", None, none="no limit") is None
    with pytest.raises(InvalidArgumentError, match=r"^n=None: use an int >= 1\.$"):
        positive_int("n", None)


def test_positive_int_takes_a_numpy_int_and_returns_a_python_int():
    for value in (np.int64(4), np.uint8(4)):
        assert positive_int("n", value) == 4 and type(positive_int("n", value)) is int
    assert type(FrameStack(Corridor(), np.int32(2)).num_frames) is int


@pytest.mark.parametrize("bad", [0, -2, True, 2.0, "3", np.bool_(True), np.int64(0), np.float64(2.0)])
def test_positive_int_names_the_bad_value_and_the_fix(bad):
    with pytest.raises(
        InvalidArgumentError, match=rf"^steps={re.escape(repr(bad))} for X: use None \(no limit\) or an int >= 1\.$"
    ):
        positive_int("steps", bad, none="no limit", where="for X")


@pytest.mark.parametrize(
    "wrap, match",
    [
        (lambda env: TimeLimit(env, 0), r"max_steps=0 for TimeLimit: use an int >= 1"),
        (lambda env: ActionRepeat(env, True), r"repeat=True for ActionRepeat: use an int >= 1"),
        (lambda env: FrameStack(env, -1), r"num_frames=-1 for FrameStack: use an int >= 1"),
        (lambda env: FrameStack(env, 10**11), r"num_frames=100000000000 for FrameStack: use an int from 1 to 4096 "),
    ],
)
def test_wrappers_refuse_a_non_positive_count(wrap, match):
    with pytest.raises(InvalidArgumentError, match=match):
        wrap(Corridor())
