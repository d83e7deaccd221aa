"""The conformance kit's failures name the leaf, the first failing position (step, env, element) and the
values (and the bound broken, or the value expected), with arrays summarized, never printed whole."""

import re

import jax.numpy as jnp
import numpy as np
import pytest

from envhub import spaces, testing
from envhub.testing.messages import space_violation, summarize, tree_difference
from envhub.testing.toy_envs import Corridor
from envhub.wrappers import VmapEnvironment

OPTIONS = testing.Options(time_limit_kwarg="max_steps", time_limit=5)
NUMBER = r"-?\d+\.\d+"


class LowBound(Corridor):
    """obs[1] (always 0) lies below its Box's low bound 0.5: every obs is outside the space."""

    @property
    def observation_space(self):
        return spaces.Box(np.array([0.0, 0.5]), np.array([float(self.length), 1.0]), (2,))


class ShortBox(Corridor):
    """The right end (the terminal cell) lies above the Box: only the final_obs of a terminal step is outside."""

    @property
    def observation_space(self):
        return spaces.Box(0.0, float(self.length - 1), (2,))


def make(cls=Corridor, bug=None, num_envs=None):
    def factory(**kwargs):
        env = cls(bug=bug, **kwargs) if bug else cls(**kwargs)
        return env if num_envs is None else VmapEnvironment(env, num_envs)

    return factory


def short(message):
    """A kit message stays readable: no whole array, no NumPy/JAX repr."""
    assert "Array(" not in message and "array(" not in message, message
    assert len(message) < 500, message
    return message


def test_a_final_obs_bug_names_final_obs_the_step_the_env_and_both_values():
    result = testing.run_check("truncation", make(bug="final_obs", num_envs=3), OPTIONS)
    assert result.failed
    match = re.fullmatch(
        r"final_obs at the time limit is not the observation the episode reached \(obs, in a run with a longer "
        rf"limit\): final_obs\[0\] at step 5, env (\d) is ({NUMBER}), but obs\[0\] is ({NUMBER}) "
        r"\(final_obs there: float32\[2\] \[.+\], obs there: float32\[2\] \[.+\]\)",
        short(result.message),
    )
    assert match, result.message
    assert 0 <= int(match[1]) < 3 and match[2] != match[3]


def test_no_auto_reset_names_the_first_ended_step_and_its_obs():
    result = testing.run_check("autoreset", make(bug="final_obs"), OPTIONS)
    assert result.failed
    assert re.fullmatch(
        r"on every step that ended an episode, obs == final_obs: no auto-reset happened \(the first: step \d+, "
        r"where obs and final_obs are both float32\[2\] \[\d\., 0\.\]; final_obs must be the obs the episode "
        r"reached, obs the new episode's first\)",
        short(result.message),
    ), result.message


def test_both_flags_and_a_missed_truncation_name_the_step_and_the_env():
    both = testing.run_check("autoreset", make(bug="both_flags", num_envs=2), testing.Options(num_steps=300))
    assert re.fullmatch(
        r"terminated and truncated are both set on one step \(terminated must win\): first at step \d+, env [01]",
        short(both.message),
    ), both.message
    past = testing.run_check("truncation", make(bug="no_truncation", num_envs=2), OPTIONS)
    assert re.fullmatch(
        r"an episode ran past the time limit 5 \(at step 6, env 0\): a missed truncation, "
        r"or a dummy step after an auto-reset",
        short(past.message),
    ), past.message


def test_a_final_obs_outside_the_space_names_the_value_and_the_bound():
    result = testing.run_check("autoreset", make(ShortBox, num_envs=2), OPTIONS)
    assert result.failed
    assert re.fullmatch(
        r"some final_obs lie outside observation_space: final_obs\[0\] at step \d+, env [01] is 6\.0, above the "
        r"high bound 5\.0 of Box\(low=0\.0, high=5\.0, shape=\(2,\), dtype=float32\) "
        r"\(final_obs there: float32\[2\] \[6\., 0\.\]\)",
        short(result.message),
    ), result.message


@pytest.mark.parametrize("num_envs,where", [(None, ""), (2, " at env 0")])
def test_an_init_obs_outside_the_space_names_the_element_the_env_and_the_bound(num_envs, where):
    result = testing.run_check("init", make(LowBound, num_envs=num_envs), OPTIONS)
    assert result.failed
    assert re.fullmatch(
        rf"init obs is not in observation_space: obs\[1\]{where} is 0\.0, below the low bound 0\.5 of Box\(low=\[0\. , 0\.5\], "
        r"high=\[6\., 1\.\], shape=\(2,\), dtype=float32\) \(obs there: float32\[2\] \[\d\., 0\.\]\)",
        short(result.message),
    ), result.message


def test_vmap_misrouting_names_the_leaf_and_both_values():
    from envhub.testing.probe import Probe

    probe = Probe(make(), OPTIONS)
    mapped = probe.vmapped_first_steps
    probe.vmapped_first_steps = lambda keys: mapped(keys[::-1])  # results routed to the wrong keys
    result = testing.run_check("vmap", make(), OPTIONS, probe=probe)
    assert re.fullmatch(
        rf"vmap result 0 differs from running key 0 alone \(mis-routed\?\): init's TimeStep\.obs\[0\] is ({NUMBER}) "
        rf"under vmap, ({NUMBER}) alone \(init's TimeStep\.obs there: float32\[2\] \[.+\] under vmap, "
        r"float32\[2\] \[.+\] alone\)",
        short(result.message),
    ), result.message


def test_tree_difference_names_leaf_position_element_and_values():
    a = {"pos": np.zeros((5, 3, 2), np.float32), "t": np.zeros((5, 3), np.int32)}
    b = {"pos": a["pos"].copy(), "t": a["t"].copy()}
    b["pos"][2, 1, 1], b["t"][3, 0] = 7.0, 1
    axes = ("step", "env")
    assert tree_difference(a, a, ("final_obs", "obs"), axes=axes) is None
    assert tree_difference(a, b, ("final_obs", "obs"), axes=axes) == (
        "final_obs['pos'][1] at step 3, env 1 is 0.0, but obs['pos'][1] is 7.0 "
        "(final_obs['pos'] there: float32[2] [0., 0.], obs['pos'] there: float32[2] [0., 7.])"
    )
    assert tree_difference(a, b, ("in jit", "eagerly"), root="TimeStep.obs", axes=axes) == (
        "TimeStep.obs['pos'][1] at step 3, env 1 is 0.0 in jit, 7.0 eagerly "
        "(TimeStep.obs['pos'] there: float32[2] [0., 0.] in jit, float32[2] [0., 7.] eagerly)"
    )
    later = np.arange(5)[:, None] > 2  # only steps 4 and 5 count
    assert tree_difference(a, b, ("final_obs", "obs"), axes=axes, where=later) == (
        "final_obs['t'] at step 4, env 0 is 0, but obs['t'] is 1"
    )
    close = {"pos": a["pos"] + 1e-7, "t": a["t"]}
    assert tree_difference(a, close, ("x", "y"), axes=axes, rule="close", atol=1e-6) is None
    assert tree_difference(a, [a], ("x", "y")).startswith("the pytree structures differ: PyTreeDef(")


def test_space_violation_names_the_leaf_the_index_the_value_and_the_bound():
    space = spaces.Tree({"pos": spaces.Box(0.0, 6.0, (2,)), "t": spaces.Discrete(4)})
    obs = {"pos": np.zeros((5, 3, 2), np.float32), "t": np.zeros((5, 3), np.int32)}
    axes = ("step", "env")
    assert space_violation(space, obs, "obs", axes=axes) is None
    obs["t"][1, 1] = 4
    assert space_violation(space, obs, "obs", axes=axes) == (
        "obs['t'] at step 2, env 1 is 4, outside [0, 4) of Discrete(4, dtype=int32)"
    )
    obs["t"][1, 1], obs["pos"][4, 2, 0] = 0, np.nan
    assert space_violation(space, obs, "obs", axes=axes) == (
        "obs['pos'][0] at step 5, env 2 is nan, not within [0.0, 6.0] of "
        "Box(low=0.0, high=6.0, shape=(2,), dtype=float32) (obs['pos'] there: float32[2] [nan,  0.])"
    )
    assert space_violation(spaces.Box(-1.0, 1.0, (3,)), jnp.array([0.0, -2.0, 5.0]), "sample") == (
        "sample[1] is -2.0, below the low bound -1.0 of Box(low=-1.0, high=1.0, shape=(3,), dtype=float32) "
        "(sample there: float32[3] [ 0., -2.,  5.])"
    )
    wrong = {"pos": obs["pos"], "t": obs["t"].astype(np.float32)}
    assert space_violation(space, wrong, "obs", axes=axes) == (
        "obs['t'] is float32 of shape (5, 3) (leading axes step, env), but Discrete(4, dtype=int32) holds "
        "int32 of shape ()"
    )


def test_summaries_show_dtype_shape_and_a_few_numbers_never_the_whole_array():
    frames = np.arange(84 * 84 * 4).reshape(84, 84, 4).astype(np.uint8)
    assert summarize(frames) == "uint8[84,84,4] [0, 1, 2, 3, ...] min 0 max 255"
    assert summarize(np.float32(3.5)) == "float32[] 3.5"
    assert summarize(np.full(9, np.nan)) == "float64[9] [nan, nan, nan, nan, ...] all nan"
    assert summarize(np.array([True, False])) == "bool[2] [ True, False]"


def test_the_obs_after_reset_outside_the_space_names_the_element_and_the_bound():
    result = testing.run_check("structure", make(LowBound), OPTIONS)
    assert result.failed
    assert re.fullmatch(
        r"the obs after reset is not in observation_space: obs\[1\] is 0\.0, below the low bound 0\.5 of Box\(.+\) "
        r"\(obs there: float32\[2\] \[\d\., 0\.\]\)",
        short(result.message),
    ), result.message


class ShiftedBox(spaces.Box):
    """A space whose samples lie above its own high bound."""

    def sample(self, key, shape=()):
        return super().sample(key, shape) + 10.0


class BadSamples(Corridor):
    @property
    def observation_space(self):
        return ShiftedBox(0.0, float(self.length), (2,))


def test_a_sample_outside_its_space_names_the_element_and_the_bound():
    result = testing.run_check("spaces", make(BadSamples), OPTIONS)
    assert result.failed
    assert re.fullmatch(
        rf"env\.observation_space\.sample\(\) gave a value it does not contain: sample\[0\] is ({NUMBER}), above "
        r"the high bound 6\.0 of Box\(low=0\.0, high=6\.0, shape=\(2,\), dtype=float32\) "
        r"\(sample there: float32\[2\] \[.+\]\)",
        short(result.message),
    ), result.message
