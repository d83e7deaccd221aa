"""Thin wrappers, one behaviour each, with their state in the environment state.

Every wrapper keeps envhub's TimeStep meaning (same-step auto-reset, true ``final_obs``, one
pytree structure from init/reset/step) and works on host environments as well as JAX-native
ones: it only calls the inner env's public ``init``/``reset``/``step``, passes the inner state
through untouched, and resets a subset of a batch with ``reset(key, state, where=mask)``.
"""

from envhub.wrappers.actions import ClipAction, Discretize, RescaleAction
from envhub.wrappers.base import StatefulWrapper, TimeStepWrapper, Wrapper, WrapperState, batch_shape
from envhub.wrappers.episode import ActionRepeat, EpisodicLife, IgnoreTruncation, RecordEpisodeStatistics, TimeLimit
from envhub.wrappers.frames import FrameStack, StickyAction
from envhub.wrappers.normalize import NormalizeObservation, NormalizeReward
from envhub.wrappers.sharded import ShardedEnvironment
from envhub.wrappers.transform import (
    ClipReward,
    DropFinalObs,
    FlattenObservation,
    TransformAction,
    TransformObservation,
    TransformReward,
)
from envhub.wrappers.vmap import VmapEnvironment

__all__ = [
    "ActionRepeat",
    "ClipAction",
    "ClipReward",
    "Discretize",
    "DropFinalObs",
    "EpisodicLife",
    "FlattenObservation",
    "FrameStack",
    "IgnoreTruncation",
    "NormalizeObservation",
    "NormalizeReward",
    "RecordEpisodeStatistics",
    "RescaleAction",
    "ShardedEnvironment",
    "StatefulWrapper",
    "StickyAction",
    "TimeLimit",
    "TimeStepWrapper",
    "TransformAction",
    "TransformObservation",
    "TransformReward",
    "VmapEnvironment",
    "Wrapper",
    "WrapperState",
    "batch_shape",
]
