"""``positive_int``: the one int >= 1 check of the core, the wrappers and the plugins."""

from __future__ import annotations

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


@pytest.mark.parametrize("bad", [0, -2, True, 2.0, "3"])
def test_positive_int_names_the_bad_value_and_the_fix(bad):
    with pytest.raises(InvalidArgumentError, match=rf"^steps={bad!r} for X: use None \(no limit\) or an int >= 1\.$"):
        positive_int("steps", bad, none="no limit", where="for X")


@pytest.mark.parametrize(
    "wrap, match",
    [
        (lambda env: TimeLimit(env, 0), r"max_steps=0 for TimeLimit: use an int >= 1"),
        (lambda env: ActionRepeat(env, True), r"repeat=True for ActionRepeat: use an int >= 1"),
        (lambda env: FrameStack(env, -1), r"num_frames=-1 for FrameStack: use an int >= 1"),
    ],
)
def test_wrappers_refuse_a_non_positive_count(wrap, match):
    with pytest.raises(InvalidArgumentError, match=match):
        wrap(Corridor())
