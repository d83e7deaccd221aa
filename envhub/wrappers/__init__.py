"""Thin wrappers, one behaviour each, with their state in the environment state.

Every wrapper keeps envhub's TimeStep meaning (same-step auto-reset, true ``final_obs``, one
pytree structure from init/reset/step) and works on host environments as well as JAX-native
ones: it only calls the inner env's public ``init``/``reset``/``step``, passes the inner state
through untouched, and resets a subset of a batch with ``reset(key, state, where=mask)``.
"""

from envhub.tree import select  # its home before envhub.tree
from envhub.wrappers.actions import ClipAction, RescaleAction
from envhub.wrappers.base import (
    EpisodeStateWrapper,
    TimeStepWrapper,
    VmapEnvironment,
    Wrapper,
    WrapperState,
    batch_shape,
)
from envhub.wrappers.episode import ActionRepeat, EpisodicLife, IgnoreTruncation, RecordEpisodeStatistics, TimeLimit
from envhub.wrappers.frames import FrameStack, StickyAction
from envhub.wrappers.transform import (
    ClipReward,
    Discretize,
    DropFinalObs,
    FlattenObservation,
    NormalizeObservation,
    NormalizeReward,
)

__all__ = [
    "ActionRepeat",
    "ClipAction",
    "ClipReward",
    "Discretize",
    "DropFinalObs",
    "EpisodeStateWrapper",
    "EpisodicLife",
    "FlattenObservation",
    "FrameStack",
    "IgnoreTruncation",
    "NormalizeObservation",
    "NormalizeReward",
    "RecordEpisodeStatistics",
    "RescaleAction",
    "StickyAction",
    "TimeLimit",
    "TimeStepWrapper",
    "VmapEnvironment",
    "Wrapper",
    "WrapperState",
    "batch_shape",
    "select",
]
