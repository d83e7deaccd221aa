"""Bad input to params as data (docs/params.md; docs/errors.md: checked where the value enters): every case a table row of input -> error class and
message, refused before any work (structure, shape and dtype while tracing too), the state passed in still usable.

The rules live in ``envhub.core.params`` (params and ``where``) and ``envhub.native.state`` (the state passed in)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envhub import spaces, testing, wrappers
from envhub.errors import InvalidArgumentError
from envhub.plugin import Bounds, JaxEnvironment, JaxStep

N = 4
KEY = jax.random.key(0)
DEFAULT = {"goal": 1.0, "limit": 10, "speed": 0.25, "start": 0.0}


class Slide(JaxEnvironment):
    """A point at ``start`` moves ``speed`` right on action 1, left on 0; ``goal`` terminates. ``limit`` is an int
    leaf (as gymnax's ``max_steps_in_episode``), ``speed`` is bounded below by 0."""

    def __init__(self, num_envs: int | None = None, **kwargs: Any):
        super().__init__(
            observation_space=spaces.Box(-np.inf, np.inf, (1,)),
            action_space=spaces.Discrete(2),
            num_envs=num_envs,
            max_episode_steps=50,
            **kwargs,
        )

    @property
    def default_params(self) -> Any:
        return dict(DEFAULT)

    @property
    def params_bounds(self) -> Bounds:
        return Bounds(speed=(0.0, None), limit=(1, None))

    def _reset_one(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        x = params["start"] + 0.01 * jax.random.uniform(key)
        return x, jnp.reshape(x, (1,))

    def _step_one(self, key: jax.Array, x: Any, action: Any, params: Any) -> JaxStep:
        x = x + params["speed"] * (2 * action - 1)
        obs, end = jnp.reshape(x, (1,)), x >= params["goal"]
        return JaxStep(state=x, obs=obs, reward=jnp.float32(0.0), terminated=end, truncated=False, info={})


def with_(**values: Any) -> dict[str, Any]:
    return {**DEFAULT, **values}


def without(name: str) -> dict[str, Any]:
    return {k: v for k, v in DEFAULT.items() if k != name}


#: (case, params, message fragment, refused while tracing too). Every row is an InvalidArgumentError.
BAD_PARAMS = [
    ("extra field", with_(x=1.0), r"unknown params\['x'\]", True),
    ("missing field", without("start"), r"missing params\['start'\]", True),
    ("list for the dict", list(DEFAULT.values()), r"params is a list where env.default_params is a dict", True),
    ("one number", 1.0, r"params is a float where env.default_params is a dict", True),
    ("None leaf", with_(goal=None), r"params\['goal'\] is None where a value is needed", True),
    ("Python list leaf", with_(speed=[0.1] * N), r"params\['speed'\] is a list where an array is needed .*jnp.asarray", True),
    ("extra axis", with_(speed=jnp.ones((N, 1))), r"params\['speed'\] .* has shape \(4, 1\); it takes shape \(\) \(one value for every env\) or \(4,\) \(one per env\)", True),
    ("other num_envs", with_(speed=jnp.ones(3)), r"params\['speed'\] .* has shape \(3,\); it takes shape \(\)", True),
    ("float for an int leaf", with_(limit=2.5), r"params\['limit'\] .* has dtype float32, which cannot be cast safely to its dtype int32", True),
    ("float array for an int leaf", with_(limit=jnp.full(N, 3.0)), r"params\['limit'\] .* has dtype float32, which cannot", True),
    ("bool for a float leaf", with_(goal=True), r"params\['goal'\] .* has dtype bool, which cannot be cast safely to its dtype float32", True),
    ("bool array for an int leaf", with_(limit=jnp.ones(N, bool)), r"params\['limit'\] .* has dtype bool", True),
    ("complex", with_(goal=1 + 2j), r"params\['goal'\] .* has dtype complex64", True),
    ("a key", with_(speed=jax.random.key(1)), r"params\['speed'\] .* has dtype key<fry>", True),
    ("a string", with_(speed="fast"), r"params\['speed'\]='fast' .* is not an array: give a float32 value", True),
    ("a ShapeDtypeStruct", with_(speed=jax.ShapeDtypeStruct((), jnp.float32)), r"params\['speed'\]=ShapeDtypeStruct.* is not an array", True),
    ("NaN", with_(goal=jnp.nan), r"params\['goal'\] .* has the value nan; it must be finite", False),
    ("NaN in a bounded leaf", with_(speed=jnp.array([0.1, jnp.nan, 0.2, 0.3])), r"params\['speed'\] .* has the value nan; it must be finite", False),
    ("inf", with_(speed=np.inf), r"params\['speed'\] .* has the value inf; it must be finite", False),
    ("negative", with_(speed=-1.0), r"params\['speed'\] .* has the value -1.0; it must be >= 0.0", False),
    ("int too big (Python)", with_(limit=2**40), r"params\['limit'\] .* has the value 1099511627776, which does not fit its dtype int32", False),
    ("int too big (numpy int64)", with_(limit=np.full(N, 2**40)), r"has the value 1099511627776, which does not fit its dtype int32", False),
    ("uint32 past int32", with_(limit=np.uint32(4_000_000_000)), r"has the value 4000000000, which does not fit its dtype int32", False),
    ("int64 past int32 for a float leaf", with_(goal=np.int64(2**40)), r"params\['goal'\] .* has the integer value 1099511627776, outside int32 .* it would wrap; give it as a float \(1099511627776.0\)", False),
    ("int64 array past int32 for a float leaf", with_(goal=np.full(N, -(2**33))), r"has the integer value -8589934592, outside int32", False),
    ("uint64 past uint32 for a float leaf", with_(speed=np.uint64(2**63)), r"params\['speed'\] .* integer value 9223372036854775808, outside uint32", False),
    ("Python int past int32 for a float leaf", with_(goal=2**40), r"params\['goal'\] .* has the integer value 1099511627776, outside int32", False),
    ("Python int past float32", with_(goal=2**200), r"has the integer value 1606938044258990275541962092341162602522202993782792835301376, .* give a value float32 holds", False),
    ("float64 past float32", with_(goal=np.float64(1e300)), r"params\['goal'\] .* has the value 1e\+300, beyond its dtype float32 .* where it would be inf", False),
]  # fmt: skip

#: Params that must be taken (cast to the defaults' dtypes).
GOOD_PARAMS = [
    ("numpy float32 scalars", {k: np.float32(v) for k, v in with_(limit=1).items()} | {"limit": np.int32(12)}),
    ("numpy float64 per env", with_(speed=np.full(N, 0.5))),
    ("int array for a float leaf", with_(goal=jnp.full(N, 3, jnp.int32))),
    ("Python int for a float leaf", with_(goal=3)),
    ("integral Python float for an int leaf", with_(limit=12.0)),
    ("float16 for a float leaf", with_(speed=jnp.full(N, 0.5, jnp.float16))),
    ("uint8 for a float leaf", with_(goal=np.uint8(3))),
]


@pytest.fixture(scope="module")
def env_and_state():
    env = Slide(num_envs=N)
    state, _ = env.init(KEY)
    return env, state


def steps_again(env: Slide, state: Any) -> None:
    """The state passed to a refused call still steps, as if the call never happened."""
    _, ts = env.step(jax.random.key(7), state, jnp.ones(N, jnp.int32))
    assert np.isfinite(np.asarray(ts.obs)).all()


@pytest.mark.parametrize(("params", "match", "traced"), [row[1:] for row in BAD_PARAMS], ids=[r[0] for r in BAD_PARAMS])
def test_bad_params_are_refused_by_init_reset_and_set_params(env_and_state, params, match, traced):
    env, state = env_and_state
    calls = {
        "init": lambda: env.init(KEY, params=params),
        "reset": lambda: env.reset(KEY, state, params=params),
        "reset where": lambda: env.reset(KEY, state, where=jnp.ones(N, bool), params=params),
        "set_params": lambda: env.set_params(state, params),
    }
    for call in calls.values():
        with pytest.raises(InvalidArgumentError, match=match):
            call()
    if traced:  # structure, shape and dtype are known while tracing: refused there with the same message
        with pytest.raises(InvalidArgumentError, match=match):
            jax.jit(lambda s: env.set_params(s, params))(state)
    steps_again(env, state)


@pytest.mark.parametrize("params", [row[1] for row in GOOD_PARAMS], ids=[r[0] for r in GOOD_PARAMS])
def test_params_of_castable_kinds_are_taken_with_the_defaults_dtypes(env_and_state, params):
    env, state = env_and_state
    new = env.set_params(state, params)
    assert jax.tree.map(lambda x: (x.shape, x.dtype), new.next_params) == {
        k: ((N,), jnp.int32 if k == "limit" else jnp.float32) for k in DEFAULT
    }


def test_values_are_not_checked_inside_jit_but_structure_is():
    env = Slide(num_envs=N)
    init = jax.jit(lambda k, p: env.init(k, params=p))
    init(KEY, with_(speed=jnp.full(N, jnp.nan)))  # a traced value: no check, as for action values
    with pytest.raises(InvalidArgumentError, match=r"params\['speed'\] .* has shape \(3,\)"):
        init(KEY, with_(speed=jnp.ones(3)))
    vmapped = jax.vmap(lambda k, s: Slide().init(k, params=with_(speed=s)))
    with pytest.raises(InvalidArgumentError, match=r"params\['speed'\] .* has shape \(3,\); it takes shape \(\)\."):
        vmapped(jax.random.split(KEY, 2), jnp.ones((2, 3)))  # under jax.vmap, the unbatched env's per-env shapes


#: (case, where, message fragment) on a batched env of N envs; refused eagerly and under jit.
BAD_WHERE = [
    ("0/1 ints", jnp.array([0, 1, 0, 1]), r"where has dtype int32; it takes a bool array of shape \(4,\), one flag per env"),
    ("indices", jnp.array([1, 3]), r"where has dtype int32.*indices and 0/1 are not flags"),
    ("a list of ints", [0, 1, 2, 3], r"where has dtype int32"),
    ("floats", jnp.array([0.0, 1.0, 0.5, 0.0]), r"where has dtype float32"),
    ("a scalar on a batched env", True, r"where has shape \(\); it takes a bool array of shape \(4,\).*or leave it out"),
    ("another length", jnp.array([True, False]), r"where has shape \(2,\); it takes a bool array of shape \(4,\)"),
    ("an extra axis", jnp.ones((N, 1), bool), r"where has shape \(4, 1\)"),
    ("a square mask", jnp.ones((N, N), bool), r"where has shape \(4, 4\)"),
    ("a string", "all", r"'all'\) .*: where is not an array"),
    ("Nones", [None] * N, r"where is not an array"),
]  # fmt: skip


@pytest.mark.parametrize(("where", "match"), [row[1:] for row in BAD_WHERE], ids=[r[0] for r in BAD_WHERE])
def test_bad_where_is_refused_by_reset_and_set_params(env_and_state, where, match):
    env, state = env_and_state
    params = with_(start=3.0)
    for method, call in [
        ("reset", lambda w: env.reset(KEY, state, where=w)),
        ("reset", lambda w: env.reset(KEY, state, where=w, params=params)),
        ("set_params", lambda w: env.set_params(state, params, where=w)),
    ]:
        with pytest.raises(InvalidArgumentError, match=rf"{method}\(where=.*{match}"):
            call(where)
        if not isinstance(where, (str, list)):
            with pytest.raises(InvalidArgumentError, match=match):
                jax.jit(call)(where)
    steps_again(env, state)


def test_where_of_bools_is_taken_and_an_unbatched_env_takes_a_scalar():
    env = Slide(num_envs=N)
    state, _ = env.init(KEY)
    for where in ([True, False, True, False], np.array([True, False, True, False])):
        new = env.set_params(state, with_(start=3.0), where=where)
        np.testing.assert_allclose(new.next_params["start"], [3.0, 0.0, 3.0, 0.0])
    one = Slide()
    state, _ = one.init(KEY)
    assert one.set_params(state, with_(start=3.0), where=False).next_params["start"] == 0.0
    assert one.reset(KEY, state, where=np.bool_(True))[0].steps.shape == ()
    with pytest.raises(
        InvalidArgumentError, match=r"where has shape \(2,\); it takes a bool scalar \(this env is unbatched\)"
    ):
        one.reset(KEY, state, where=jnp.array([True, False]))
    states = jax.vmap(one.init)(jax.random.split(KEY, 2))[0]  # under jax.vmap, one flag per env is a scalar
    new = jax.vmap(lambda s, w: one.set_params(s, with_(start=3.0), w))(states, jnp.array([True, False]))
    np.testing.assert_allclose(new.next_params["start"], [3.0, 0.0])


def other_states() -> list[tuple[str, Any, str]]:
    """(case, state, message fragment): states that are not a state of ``Slide(num_envs=N)``."""
    state, ts = Slide(num_envs=N).init(KEY)
    return [
        ("num_envs=3", Slide(num_envs=3).init(KEY)[0], r"a state of num_envs=3, but this env has num_envs=4"),
        ("unbatched", Slide().init(KEY)[0], r"a state of one env \(unbatched\), but this env has num_envs=4"),
        ("(state, ts)", (state, ts), r"not a value of type tuple; \(state, ts\): .* pass its first item"),
        ("an observation", ts.obs, r"takes one of its own states \(a JaxState\), not a value of type ArrayImpl"),
        ("a dict (another backend's)", testing.toy_envs.Corridor().init(KEY)[0], r"not a value of type dict"),
        ("from jax.eval_shape", jax.eval_shape(Slide(num_envs=N).init, KEY)[0], r"state of jax.ShapeDtypeStructs"),
        ("reset_mode='cached'", Slide(num_envs=N, reset_mode="cached").init(KEY)[0], r"another structure .*state.first is set, this env's is None"),
        ("no spares", Slide(num_envs=N, reset_spares=False).init(KEY)[0], r"another structure .*state.spares is None, this env's is set"),
    ]  # fmt: skip


@pytest.mark.parametrize("case", range(8))
def test_a_state_of_another_env_is_refused_by_every_call_that_takes_one(env_and_state, case):
    env, good = env_and_state
    name, state, match = other_states()[case]
    calls = [
        ("set_params", lambda s: env.set_params(s, with_(start=1.0))),
        ("reset", lambda s: env.reset(KEY, s)),
        ("reset", lambda s: env.reset(KEY, s, where=jnp.ones(N, bool))),
        ("step", lambda s: env.step(KEY, s, jnp.ones(N, jnp.int32))),
    ]
    for method, call in calls:
        with pytest.raises(InvalidArgumentError, match=rf"^{method} of '<unregistered>' .*{match}"):
            call(state)
    if name.startswith("num_envs"):  # shapes are known while tracing: the same refusal under jit
        with pytest.raises(InvalidArgumentError, match=match):
            jax.jit(calls[0][1])(state)
    steps_again(env, good)
    assert jax.eval_shape(env.set_params, jax.eval_shape(env.init, KEY)[0], with_(start=1.0)).steps.shape == (N,)


def test_a_batched_wrapper_refuses_a_state_of_another_num_envs():
    env, other = wrappers.VmapEnvironment(Slide(), 2), wrappers.VmapEnvironment(Slide(), 3)
    good, bad = env.init(KEY)[0], other.init(KEY)[0]
    match = r"of '<unregistered>' \(num_envs=2\) was given a state whose state.env has shape \(3,\), not leading with 2"
    for call in (
        lambda: env.set_params(bad, with_(start=1.0)),
        lambda: env.reset(KEY, bad),
        lambda: env.reset(KEY, bad, where=jnp.array([True, False])),
        lambda: env.step(KEY, bad, jnp.ones(2, jnp.int32)),
    ):
        with pytest.raises(InvalidArgumentError, match=match):
            call()
    env.step(KEY, good, jnp.ones(2, jnp.int32))


def test_params_on_an_env_without_params_none_and_set_params_in_cached_mode_name_the_fix():
    corridor = testing.toy_envs.Corridor()
    state, _ = corridor.init(KEY)
    for call in (
        lambda: corridor.init(KEY, params={"length": 3}),
        lambda: corridor.reset(KEY, state, params={"length": 3}),
        lambda: corridor.set_params(state, {"length": 3}),
    ):
        with pytest.raises(InvalidArgumentError, match=r"params were given, but '<unregistered>' has no parameters"):
            call()
    env = Slide(num_envs=N)
    state, _ = env.init(KEY)
    with pytest.raises(InvalidArgumentError, match=r"params is None where env.default_params is a dict"):
        env.set_params(state, None)  # (init and reset read None as "the defaults" and "the state's own")
    cached = Slide(num_envs=N, reset_mode="cached")
    state, _ = cached.init(KEY)
    with pytest.raises(InvalidArgumentError, match=r"reset_mode='cached' .* pass them to env.reset"):
        cached.set_params(state, with_(start=1.0))
    state, ts = cached.reset(KEY, state, params=with_(start=3.0))  # the fix it names works
    np.testing.assert_allclose(ts.obs[:, 0], 3.0, atol=0.011)


@pytest.mark.requires_plugin("gymnax")
def test_gymnax_env_params_cases():
    import dataclasses

    import envhub

    env = envhub.make("gymnax/CartPole-v1", num_envs=N)
    default = env.default_params
    state, _ = env.init(KEY)
    rows = [
        (dataclasses.asdict(default), r"params is a dict where env.default_params is a gymnax\.environments\.classic_control\.cartpole\.EnvParams"),
        (envhub.make("gymnax/Acrobot-v1").default_params, r"params is a gymnax\.environments\.classic_control\.acrobot\.EnvParams where"),
        (default.replace(max_steps_in_episode=500.5), r"params.max_steps_in_episode .* has dtype float32, which cannot be cast safely to its dtype int32"),
        (default.replace(max_steps_in_episode=True), r"params.max_steps_in_episode .* has dtype bool"),
        (default.replace(max_steps_in_episode=np.array(2**40)), r"params.max_steps_in_episode .* has the value 1099511627776, which does not fit"),
        (default.replace(gravity=jnp.nan), r"params.gravity of 'gymnax/CartPole-v1' has the value nan; it must be finite"),
        (default.replace(masspole=-0.1), r"params.masspole .* must be >= 0.0"),
        (default.replace(total_mass=0.0), r"params.total_mass .* has the value 0.0; it must be > 0.0"),
        (default.replace(tau=-0.02), r"params.tau .* it must be > 0.0"),
        (default.replace(force_mag=np.int64(2**40)), r"params.force_mag .* integer value 1099511627776, outside int32"),
    ]  # fmt: skip
    for params, match in rows:
        with pytest.raises(InvalidArgumentError, match=match):
            env.set_params(state, params)
    env.set_params(state, default.replace(max_steps_in_episode=200.0))  # an integral float, as make's kwargs
    for kwargs, match in [({"m": -1.0}, r"m=-1.0 is out of range: it must be > 0.0"), ({"dt": 0}, r"dt=0 .* > 0.0")]:
        with pytest.raises(InvalidArgumentError, match=r"make\('gymnax/Pendulum-v1', \.\.\.\): " + match):
            envhub.make("gymnax/Pendulum-v1", **kwargs)  # physical constants: a negative mass, a time step of 0
    acrobot = envhub.make("gymnax/Acrobot-v1", num_envs=N).init(KEY)[0]
    with pytest.raises(InvalidArgumentError, match=r"^step of 'gymnax/CartPole-v1' .*state.env is a gymnax\..*acrobot"):
        env.step(KEY, acrobot, jnp.ones(N, jnp.int32))
    env.step(KEY, state, jnp.ones(N, jnp.int32))
