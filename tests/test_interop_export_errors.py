"""Bad input to the gymnax export (``envhub.interop.to_gymnax``): each case an envhub error naming the value and the
fix, with the same rule as ``env.step`` and ``env.init(params=...)``, and the state passed in still usable.

The JaxMARL export's cases are in tests/test_interop_jaxmarl.py (importing jaxmarl takes seconds); TorchRL's need
torch (tests/test_interop_torchrl.py, in its side venv)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub.errors import ActionError, ClosedEnvironmentError, InvalidArgumentError
from envhub.testing.toy_envs import Corridor

pytestmark = pytest.mark.requires_plugin("gymnax")
KEY = jax.random.key(0)
STEP_RETURNS = r"to_gymnax\(step_returns={}\): give 6 for gymnax 1.0's .* or 5 for the classic"


class TwoAgents(Corridor):
    agents = ("left", "right")


class OnTheHost(Corridor):
    is_jax_native = False


@pytest.fixture(scope="module")
def export():
    from envhub.interop import to_gymnax

    exported, params = to_gymnax(envhub.make("gymnax/CartPole-v1"))
    _, state = exported.reset(KEY, params)
    return exported, params, state


@pytest.mark.parametrize(
    ("step_returns", "shown"),
    [
        ("5", "'5'"),
        (5.0, "5.0"),
        (6.0, "6.0"),
        (True, "True"),
        (None, "None"),
        (7, "7"),
        (jnp.int32(6), r"Array\(6, dtype=int32\)"),
    ],
    ids=["str", "5.0", "6.0", "True", "None", "7", "jax array"],
)
def test_step_returns_other_than_the_ints_5_and_6_are_refused(step_returns, shown):
    from envhub.interop import to_gymnax

    with pytest.raises(InvalidArgumentError, match=STEP_RETURNS.format(shown)):
        to_gymnax(envhub.make("gymnax/CartPole-v1"), step_returns=step_returns)


def test_envs_it_cannot_export_are_refused_naming_the_fix():
    import gymnax

    from envhub.interop import to_gymnax

    rows: list[tuple[Any, str]] = [
        ("gymnax/CartPole-v1", r"takes an envhub Environment, not a str .*to_gymnax\(envhub.make\('gymnax/CartPole-v1'\)\)"),
        (gymnax.make("CartPole-v1")[0], r"not a CartPole .*to_gymnax\(envhub.interop.from_gymnax\(env\)\)"),
        (envhub.make("gymnax/CartPole-v1", num_envs=2), r"needs an unbatched env; .* num_envs=2: make it without num_envs"),
        (TwoAgents(), r"needs one reward per step, .* is multi-agent .*to_pettingzoo_parallel"),
        (OnTheHost(), r"needs a JAX-native env; .* use to_gymnasium_vector"),
    ]  # fmt: skip
    for env, match in rows:
        with pytest.raises(InvalidArgumentError, match=match):
            to_gymnax(env)
    exported, params = to_gymnax(envhub.make("gymnax/CartPole-v1"), step_returns=np.int64(5))  # a numpy int is an int
    assert exported.step_returns == 5 and type(exported.step_returns) is int
    assert len(exported.step(KEY, exported.reset(KEY, params)[1], 1, params)) == 5


EXPORTS = [
    ("envhub.interop", "to_gymnasium"),
    ("envhub.interop", "to_gymnasium_vector"),
    ("envhub.interop", "to_pettingzoo_parallel"),
    ("envhub.interop", "to_pettingzoo_aec"),
    ("envhub.interop", "to_jaxmarl"),
    ("envhub.interop.sb3", "to_sb3_vec_env"),  # stable-baselines3 and torchrl: where installed
    ("envhub.interop", "to_torchrl"),
]
#: the exports whose library comes with an in-repo plugin: skipped, saying so, where it is missing
NEEDS = {"to_jaxmarl": ("jaxmarl",)}


@pytest.mark.parametrize(
    ("module", "export"),
    [pytest.param(m, e, id=e, marks=pytest.mark.requires_plugin(*NEEDS.get(e, ()))) for m, e in EXPORTS],
)
def test_every_export_refuses_what_is_not_an_envhub_env_naming_it_and_the_fix(module, export):
    """An id, a number or a gymnax env given to an export: the ``InvalidArgumentError`` of ``to_gymnax``, not an
    ``AttributeError`` from deep inside."""
    import importlib

    import gymnax

    if export == "to_sb3_vec_env":
        pytest.importorskip("stable_baselines3")
    if export == "to_torchrl":
        pytest.importorskip("torchrl")
    to = getattr(importlib.import_module(module), export)
    rows: list[tuple[Any, str]] = [
        ("gymnax/CartPole-v1", rf"^{export} takes an envhub Environment, not a str \('gymnax/CartPole-v1'\); make it first: {export}\(envhub.make\('gymnax/CartPole-v1'\)\)\.$"),
        (42, rf"^{export} takes an envhub Environment, not a int \(42\); give an envhub env, e.g. {export}\(envhub.make\("),
        (None, rf"^{export} takes an envhub Environment, not a NoneType \(None\)"),
        (gymnax.make("CartPole-v1")[0], rf"not a CartPole .*wrap it first: {export}\(envhub.interop.from_gymnax\(env\)\)"),
    ]  # fmt: skip
    for env, match in rows:
        with pytest.raises(InvalidArgumentError, match=match):
            to(env)


def bad_params(params: Any) -> list[tuple[str, Any, str]]:
    """(case, params given to reset and step, message fragment); ``params`` is the export's default."""
    import gymnax

    env_params = params.env_params
    return [
        ("raw gymnax EnvParams", gymnax.make("CartPole-v1")[1], r"must be an EnvhubGymnaxParams, got EnvParams: start from env.default_params"),
        ("a dict", {"env_params": env_params}, r"must be an EnvhubGymnaxParams, got dict"),
        ("env_params a dict", params.replace(env_params={"gravity": 9.8}), r"params is a dict where env.default_params is a gymnax\..*cartpole.EnvParams"),
        ("another env's", params.replace(env_params=gymnax.make("Acrobot-v1")[1]), r"params is a gymnax\..*acrobot.EnvParams where"),
        ("a leaf of shape (3,)", params.replace(env_params=env_params.replace(gravity=jnp.ones(3))), r"params.gravity .* has shape \(3,\); it takes shape \(\)\."),
        ("negative mass", params.replace(env_params=env_params.replace(masspole=-1.0)), r"params.masspole .* has the value -1.0; it must be >= 0.0"),
        ("NaN", params.replace(env_params=env_params.replace(gravity=jnp.nan)), r"params.gravity .* has the value nan; it must be finite"),
        ("float time limit", params.replace(env_params=env_params.replace(max_steps_in_episode=9.5)), r"max_steps_in_episode .* has dtype float32, which cannot be cast"),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(8))
def test_bad_params_are_refused_by_reset_and_step_with_the_rule_of_init(export, case):
    exported, params, state = export
    name, bad, match = bad_params(params)[case]
    with pytest.raises(InvalidArgumentError, match=match):
        exported.reset(KEY, bad)
    with pytest.raises(InvalidArgumentError, match=match):  # step used to skip the bounds and NaN checks
        exported.step(KEY, state, 1, bad)
    if "value" not in match:  # structure, shape and dtype: refused while tracing too
        with pytest.raises(InvalidArgumentError, match=match):
            jax.jit(lambda s: exported.step(KEY, s, 1, bad))(state)
    obs, *_ = exported.step(KEY, state, 1, params)  # the state passed in still steps
    assert obs.shape == (4,)


def test_bad_actions_and_states_get_env_step_errors(export):
    exported, params, state = export
    rows: list[tuple[Any, type[Exception], str]] = [
        (5, ActionError, r"5 is outside \[0, 2\)"),
        (-1, ActionError, r"-1 is outside \[0, 2\)"),
        (jnp.array([1, 0]), ActionError, r"shape \(2,\) where \(\) is needed"),
        (1.0, ActionError, r"1.0 has dtype float32 where integers are needed"),
        ("left", ActionError, r"'left' is not an array"),
        (None, ActionError, r"None is not an array"),
    ]
    for action, error, match in rows:
        with pytest.raises(error, match=match):
            exported.step(KEY, state, action, params)
    with pytest.raises(ActionError, match=r"shape \(2,\) where \(\) is needed"):  # shapes while tracing
        jax.jit(lambda s: exported.step(KEY, s, jnp.array([1, 0]), params))(state)
    obs, _ = exported.reset(KEY, params)
    with pytest.raises(InvalidArgumentError, match=r"^step of 'gymnax/CartPole-v1' takes one of its own states"):
        exported.step(KEY, obs, 1, params)  # (obs, state) swapped
    from envhub.interop import to_gymnax

    pendulum, pendulum_params = to_gymnax(envhub.make("gymnax/Pendulum-v1"))
    with pytest.raises(InvalidArgumentError, match=r"another structure .*state.env is a gymnax\..*pendulum.EnvState"):
        exported.step(KEY, pendulum.reset(KEY, pendulum_params)[1], 1, params)
    assert exported.step(KEY, state, 1, params)[0].shape == (4,)


def test_a_closed_env_is_refused():
    from envhub.interop import to_gymnax

    base = envhub.make("gymnax/CartPole-v1")
    exported, params = to_gymnax(base)
    _, state = exported.reset(KEY, params)
    base.close()
    with pytest.raises(ClosedEnvironmentError, match=r"after close\(\)"):
        exported.step(KEY, state, 1, params)
    with pytest.raises(ClosedEnvironmentError, match=r"after close\(\)"):
        exported.reset(KEY, params)


@pytest.mark.parametrize(
    ("seed", "shown"),
    [
        (-1, r"seed=-1 must be an int from 0 to 2\*\*63 - 1"),
        (2**70, r"seed=1180591620717411303424 must be"),  # was a bare OverflowError
        (1.5, r"seed=1\.5 must be"),
        (True, r"seed=True must be"),
        ("7", r"seed='7' must be"),
        ([3, -2], r"seed=-2 \(in seed=\[3, -2\]\) must be"),  # was NumPy's ValueError from SeedSequence
    ],
)
def test_the_exports_seed_rule_is_gymnasiums_non_negative_int(seed, shown):
    """The PettingZoo and TorchRL exports make their key from ``seed`` with one rule (``seed_key``; the gymnasium
    export's reset checks it first with gymnasium's own): an int from 0 to 2**63 - 1 or a list of them, as gymnasium.
    Through an export: tests/test_interop_pettingzoo_errors.py."""
    from envhub.interop.compiled import seed_key

    with pytest.raises(InvalidArgumentError, match=rf"^{shown}"):
        seed_key(seed)
    assert jax.random.key_data(seed_key(2**63 - 1)).shape == (2,) and seed_key([0, 5]) is not None
