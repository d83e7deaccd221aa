"""envhub.host.gymnasium_spaces: every gymnasium space type, gymnasium -> envhub -> gymnasium, and envhub's own ones."""

import numpy as np
import pytest

from envhub import spaces
from envhub.errors import EnvUnavailableError
from envhub.host.gymnasium_spaces import from_gymnasium_space, to_gymnasium_action, to_gymnasium_space

gym = pytest.importorskip("gymnasium").spaces

# gymnasium space -> the envhub space it must become (64-bit dtypes become 32-bit).
CASES = {
    "discrete": (gym.Discrete(5), spaces.Discrete(5)),
    "discrete-start": (gym.Discrete(3, start=-1), spaces.Discrete(3, start=-1)),
    "multidiscrete-start": (
        gym.MultiDiscrete([2, 5], np.int32, start=[1, -2]),
        spaces.MultiDiscrete([2, 5], start=[1, -2]),
    ),
    "multibinary": (gym.MultiBinary([2, 3]), spaces.Box(0, 1, (2, 3), np.int8)),
    "box-float": (gym.Box(-1.0, 2.0, (3,), np.float32), spaces.Box(-1.0, 2.0, (3,))),
    "box-uint8": (gym.Box(0, 255, (4, 4), np.uint8), spaces.Box(0, 255, (4, 4), np.uint8)),
    "dict": (
        gym.Dict({"a": gym.Discrete(2), "b": gym.Box(0.0, 1.0, (2,), np.float32)}),
        spaces.Tree({"a": spaces.Discrete(2), "b": spaces.Box(0.0, 1.0, (2,))}),
    ),
    "tuple-nested": (
        gym.Tuple((gym.MultiBinary(2), gym.Dict({"c": gym.Discrete(4, start=1)}))),
        spaces.Tree((spaces.Box(0, 1, (2,), np.int8), {"c": spaces.Discrete(4, start=1)})),
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_gymnasium_to_envhub_and_back(name):
    gym_space, envhub_space = CASES[name]
    assert from_gymnasium_space(gym_space) == envhub_space
    back = to_gymnasium_space(envhub_space)
    assert back == gym_space, f"{back} != {gym_space}"
    sample = back.sample()
    assert gym_space.contains(sample)


def test_64_bit_gymnasium_dtypes_become_32_bit():
    space = from_gymnasium_space(gym.Box(0.0, 1.0, (2,), np.float64))
    assert space == spaces.Box(0.0, 1.0, (2,)) and space.dtype == np.float32
    assert from_gymnasium_space(gym.Discrete(3)).dtype == np.int32  # gymnasium's is int64
    assert from_gymnasium_space(gym.MultiDiscrete([2, 2])) == spaces.MultiDiscrete([2, 2], dtype=np.int32)


def test_batched_discrete_exports_as_multidiscrete():
    assert to_gymnasium_space(spaces.Discrete(3, start=1).batch(4)) == gym.MultiDiscrete(
        [3] * 4, np.int32, start=[1] * 4
    )


def test_spaces_without_a_fixed_shape_are_refused_naming_the_env():
    with pytest.raises(EnvUnavailableError, match=r"'gymnasium/Words-v0'.*Text.*Box, Discrete"):
        from_gymnasium_space(gym.Text(5), "gymnasium/Words-v0")


def test_actions_take_gymnasiums_structure_and_dtype():
    space = gym.Dict({"move": gym.Discrete(3), "aim": gym.Tuple((gym.Box(-1, 1, (2,), np.float64),))})
    action = to_gymnasium_action(space, {"move": np.int32(2), "aim": (np.zeros(2, np.float32),)})
    assert action["move"].dtype == np.int64 and action["aim"][0].dtype == np.float64
    assert space.contains(action)
