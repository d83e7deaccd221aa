"""Every wrapper refuses a state of another layer of its chain (its inner env's, or a wrapper's around it) with
one clear error, before any work, and stays usable (envhub.wrappers.base: Wrapper._own_state)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh

import envhub
from envhub import spaces, wrappers
from envhub.core.types import TimeStep
from envhub.errors import InvalidArgumentError
from envhub.wrappers import TimeLimit, VmapEnvironment, WrapperState

KEY = jax.random.key(0)
FIX = "pass the state returned by this wrapper's init, reset or step"


class Drift(envhub.Environment):
    """A point moved by a Box action, with ``info["lives"]``: every wrapper envhub ships accepts it."""

    id = "toy/Drift-v0"
    action_space = spaces.Box(-1.0, 1.0, (1,))
    observation_space = spaces.Box(-10.0, 10.0, (2,))

    def _init(self, key):
        return {"x": jnp.zeros(2)}, TimeStep.first(jnp.zeros(2), {"lives": jnp.int32(3)})

    def _reset(self, key, state):
        return self._init(key)

    def _step(self, key, state, action):
        x = state["x"] + action[0]
        ts = TimeStep.transition(x, jnp.float32(1), jnp.bool_(False), jnp.bool_(False), x, {"lives": jnp.int32(3)})
        return {"x": x}, ts


def inner():
    """What every wrapper below wraps: a chain with a stateful layer, so that its inner state is another layer."""
    return TimeLimit(Drift(), 5)


def batched():
    return VmapEnvironment(inner(), 2)


BUILD = {
    "ActionRepeat": lambda: wrappers.ActionRepeat(inner(), 2),
    "ClipAction": lambda: wrappers.ClipAction(inner()),
    "ClipReward": lambda: wrappers.ClipReward(inner()),
    "Discretize": lambda: wrappers.Discretize(inner(), 3),
    "DropFinalObs": lambda: wrappers.DropFinalObs(inner()),
    "EpisodicLife": lambda: wrappers.EpisodicLife(inner()),
    "FlattenObservation": lambda: wrappers.FlattenObservation(inner()),
    "FrameStack": lambda: wrappers.FrameStack(inner(), 2),
    "IgnoreTruncation": lambda: wrappers.IgnoreTruncation(inner()),
    "NormalizeObservation": lambda: wrappers.NormalizeObservation(inner()),
    "NormalizeReward": lambda: wrappers.NormalizeReward(inner()),
    "RecordEpisodeStatistics": lambda: wrappers.RecordEpisodeStatistics(inner()),
    "RescaleAction": lambda: wrappers.RescaleAction(inner()),
    "ShardedEnvironment": lambda: wrappers.ShardedEnvironment(batched(), Mesh(np.array(jax.devices()[:1]), ("e",))),
    "StickyAction": lambda: wrappers.StickyAction(inner()),
    "TimeLimit": lambda: wrappers.TimeLimit(inner(), 3),
    "TransformAction": lambda: wrappers.TransformAction(inner(), lambda a: a * 0.5),
    "TransformObservation": lambda: wrappers.TransformObservation(inner(), lambda o: o * 2.0),
    "TransformReward": lambda: wrappers.TransformReward(inner(), lambda r: r * 2.0),
    "VmapEnvironment": batched,
    "Wrapper": lambda: wrappers.Wrapper(inner()),
}


def test_every_wrapper_envhub_ships_is_covered():
    bases = {"StatefulWrapper", "TimeStepWrapper"}  # no behaviour of their own: every wrapper below is one
    shipped = {n for n in wrappers.__all__ if isinstance(getattr(wrappers, n), type)} - {"WrapperState"} - bases
    assert set(BUILD) == shipped


@pytest.mark.parametrize("name", sorted(BUILD))
def test_a_wrapper_refuses_its_inner_envs_state_and_a_state_around_it(name):
    env = BUILD[name]()
    own, _ = env.init(KEY)
    inner_state = own.env_state  # one layer short: the state of the wrapper inside (TimeLimit's), or of Drift
    outer_state = WrapperState(own, jnp.int32(0))  # the state of a stateful wrapper around this one
    action = env.action_space.sample(KEY)
    calls = {
        "step": lambda s: env.step(KEY, s, action),
        "reset": lambda s: env.reset(KEY, s),
        "set_params": lambda s: env.set_params(s, None),
        "render": lambda s: env.render(s),
    }
    for method, call in calls.items():
        given = rf"^{name}\.{method} of 'toy/Drift-v0' was given a {type(inner_state).__name__}, the state of <"
        with pytest.raises(InvalidArgumentError, match=given) as short:
            call(inner_state)
        assert FIX in str(short.value) and "TimeLimit" in str(short.value)
        around = f"{2 + env.wraps_state} WrapperState layers, the state of a wrapper around it"
        with pytest.raises(InvalidArgumentError, match=around) as long:
            call(outer_state)
        assert FIX in str(long.value)
    with pytest.raises(InvalidArgumentError, match=r"a \(state, ts\) pair \(pass its first item\)"):
        env.step(KEY, env.init(KEY), action)
    state, ts = env.step(KEY, own, action)  # usable after the refusals
    assert jax.tree.structure(state) == jax.tree.structure(own)


def test_a_refusal_inside_jit_names_the_state_too():
    env = wrappers.RecordEpisodeStatistics(Drift())
    with pytest.raises(InvalidArgumentError, match=r"RecordEpisodeStatistics\.step .* was given a dict"):
        jax.eval_shape(lambda s: env.step(KEY, s, jnp.zeros(1)), {"x": jnp.zeros(2)})
