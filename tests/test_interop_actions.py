"""The exports check action values on the host, before their compiled step: a plain ``ActionError``
(not JAX's wrapped one), the state kept, and no value check left inside the compiled program."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub import interop, spaces
from envhub.core import action_check, checking
from envhub.core.env import values_checked_by_caller
from envhub.errors import ActionError

pytestmark = pytest.mark.requires_plugin("gymnax")


def test_single_export_refuses_an_out_of_range_action_and_keeps_its_state():
    env = interop.to_gymnasium(envhub.make("gymnax/CartPole-v1"))
    env.reset(seed=0)
    before = env._runner.carry
    with pytest.raises(ActionError, match=r"'gymnax/CartPole-v1': 2 is outside \[0, 2\).*validate_actions=False"):
        env.step(2)
    assert env._runner.carry is before  # nothing ran: the state is the one before the refused step
    obs, *_ = env.step(1)
    assert env.observation_space.contains(obs)


def test_single_export_refuses_non_finite_box_actions():
    env = interop.to_gymnasium(envhub.make("gymnax/Pendulum-v1"))
    env.reset(seed=0)
    with pytest.raises(ActionError, match=r"nan at index \(0,\) is not finite"):
        env.step(np.array([np.nan], np.float32))
    env.step(np.array([5.0], np.float32))  # finite, out of bounds: the backend clips it, as under jit


def test_vector_export_names_the_bad_env_index():
    venv = interop.to_gymnasium_vector(envhub.make("gymnax/CartPole-v1", num_envs=3))
    venv.reset(seed=0)
    with pytest.raises(ActionError, match=r"-1 at index \(2,\) is outside \[0, 2\) \(1 of 3 values invalid\)"):
        venv.step(np.array([0, 1, -1]))
    venv.step(np.array([0, 1, 1]))


def test_validate_actions_false_skips_the_host_check(monkeypatch):
    calls = []
    real = action_check.value_problem
    monkeypatch.setattr(action_check, "value_problem", lambda *a: calls.append(1) or real(*a))
    env = interop.to_gymnasium(envhub.make("gymnax/CartPole-v1", validate_actions=False))
    env.reset(seed=0)
    env.step(1)
    env.step(0)
    assert calls == []


def test_the_compiled_step_has_no_value_check_inside():
    env = envhub.make("gymnax/CartPole-v1", validate_actions="strict")  # the one mode with a check in jit
    state, _ = env.init(jax.random.key(0))

    def jaxpr():  # a new function each time: JAX caches traces by function
        return str(jax.make_jaxpr(lambda s, a: env.step(jax.random.key(1), s, a))(state, 1))

    assert "pure_callback" in jaxpr()
    with values_checked_by_caller(env):
        assert "pure_callback" not in jaxpr()
    assert "pure_callback" in jaxpr()  # only inside the block


@pytest.mark.parametrize(
    ("space", "action", "message"),
    [
        (spaces.Discrete(3, start=1), 0, r"0 is outside \[1, 4\)"),
        (spaces.Discrete(3, start=1), np.int64(4), r"4 is outside \[1, 4\)"),
        (spaces.MultiDiscrete([2, 5]), [1, 5], r"5 at index \(1,\) is outside \[0, 5\)"),
        (spaces.Box(-1.0, 1.0, (2,)), [0.0, np.inf], r"inf at index \(1,\) is not finite"),
        (spaces.Box(-1.0, 1.0, ()), float("nan"), r"nan is not finite"),
        (
            spaces.Tree({"move": spaces.Discrete(4), "force": spaces.Box(-1.0, 1.0, (2,))}),
            {"move": 4, "force": np.zeros(2)},
            r"4 in \['move'\] is outside \[0, 4\)",
        ),
    ],
)
def test_host_checker_matches_the_in_program_message(space, action, message):
    check = action_check.host_value_checker("x/Y", space)
    with pytest.raises(ActionError, match=message):
        check(action)
    with pytest.raises(ActionError, match=message):  # the same words as the traced check
        checking.check_values("x/Y", space, action_check.check_action("x/Y", space, action))


@pytest.mark.parametrize(
    ("space", "action"),
    [
        (spaces.Discrete(3, start=1), 3),
        (spaces.MultiDiscrete([[2, 3], [4, 5]]), np.array([[1, 2], [3, 4]])),
        (spaces.Box(-1.0, 1.0, (2,)), jnp.array([9.0, -9.0])),  # finite: left to the backend
        (spaces.Discrete(2), "left"),  # not a number: check_action refuses it while tracing
        (spaces.Tree({"a": spaces.Discrete(2)}), (0,)),  # wrong structure: idem
    ],
)
def test_host_checker_passes_valid_values_and_leaves_malformed_ones_to_the_trace(space, action):
    assert action_check.host_value_checker("x/Y", space)(action) is None


def test_host_checker_refuses_the_row_of_a_non_uniform_multidiscrete():
    check = action_check.host_value_checker("x/Y", spaces.MultiDiscrete([[2, 3], [4, 5]]))
    with pytest.raises(ActionError, match=r"3 at index \(0, 1\) is outside \[0, 3\)"):
        check(np.array([[1, 3], [3, 4]]))


@pytest.mark.requires_plugin("gymnax")
def test_gymnasium_export_refuses_a_fractional_discrete_action_instead_of_playing_it():
    gym_env = envhub.interop.to_gymnasium(envhub.make("gymnax/CartPole-v1"))
    gym_env.reset(seed=0)
    with pytest.raises(ActionError, match="1.7"):
        gym_env.step(1.7)
    gym_env.step(1)  # the refusal left it usable
