"""``envhub.interop.to_gymnax``: gymnax's Environment API over an envhub env (spaces, 5/6 step returns,
same-step auto-reset with the observation reached, params given to step used, refusals)."""

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envhub
from envhub import spaces
from envhub.errors import InvalidArgumentError, MissingDependencyError
from envhub.interop import to_gymnax
from envhub.testing.toy_envs import Corridor

pytestmark = pytest.mark.requires_plugin("gymnax")


def test_spaces_params_and_names_follow_gymnax():
    from gymnax.environments import environment
    from gymnax.environments import spaces as gspaces

    env, params = to_gymnax(envhub.make("gymnax/CartPole-v1"))
    assert isinstance(env, environment.Environment) and env.name == "gymnax/CartPole-v1" and env.num_actions == 2
    assert isinstance(env.action_space(params), gspaces.Discrete) and env.action_space(params).n == 2
    box = env.observation_space(params)
    assert isinstance(box, gspaces.Box) and box.shape == (4,) and box.dtype == np.float32
    assert params.max_steps_in_episode == 500 and float(params.env_params.gravity) == pytest.approx(9.8)
    assert params.replace(env_params=params.env_params.replace(max_steps_in_episode=7)).max_steps_in_episode == 7
    assert jax.tree.leaves(params) == jax.tree.leaves(env.default_params)  # a pytree: vmappable

    pendulum, p = to_gymnax(envhub.make("gymnax/Pendulum-v1"))
    act = pendulum.action_space(p)
    assert (
        isinstance(act, gspaces.Box) and act.shape == (1,) and float(act.low[0]) == -2.0 and pendulum.num_actions == 1
    )

    from envhub.interop.gymnax_export import NO_LIMIT, to_gymnax_space

    corridor, p = to_gymnax(Corridor())  # no params, no time limit in its metadata
    assert p.env_params is None and p.max_steps_in_episode == NO_LIMIT and jax.tree.leaves(p) == []

    tree = to_gymnax_space(
        spaces.Tree({"a": spaces.Discrete(3), "b": (spaces.Box(0, 1, (2,)), spaces.MultiDiscrete([2, 3]))})
    )
    assert isinstance(tree, gspaces.Dict) and isinstance(tree.spaces["b"], gspaces.Tuple)
    ints = tree.spaces["b"].spaces[1]
    assert isinstance(ints, gspaces.Box) and ints.high.tolist() == [1, 2] and ints.dtype == np.int32
    shifted = to_gymnax_space(spaces.Discrete(3, start=-1))  # not from 0: an int Box with inclusive bounds
    assert isinstance(shifted, gspaces.Box) and (int(shifted.low), int(shifted.high)) == (-1, 1)


def rollout(env, params, reset_params, steps, action=1):
    """``steps`` gymnax steps of ``action`` from ``reset(key, reset_params)``, scanned: the stacked outputs."""

    def run(key, params):
        obs, state = env.reset(key, reset_params)

        def body(state, k):
            out = env.step(k, state, jnp.asarray(action), params)
            return out[1], (out[0], *out[2:])

        return jax.lax.scan(body, state, jax.random.split(key, steps))[1]

    return run


def test_six_returns_auto_reset_and_vmapped_params_used_by_step():
    base = envhub.make("gymnax/CartPole-v1")
    env, params = to_gymnax(base)
    short = params.replace(env_params=params.env_params.replace(max_steps_in_episode=5, gravity=20.0))
    both = jax.tree.map(lambda a, b: jnp.stack([a, b]), params, short)
    key = jax.random.key(3)
    # one program: the same key for both rows, reset with the defaults, step with each row's params
    obs, reward, term, trunc, info = jax.jit(jax.vmap(rollout(env, None, params, 12), in_axes=(None, 0)))(key, both)
    assert not np.allclose(info["final_observation"][0, 1], info["final_observation"][1, 1])  # gravity changed it
    t0 = int(np.argmax(term[0]))  # default params: the pole falls, terminated, not truncated
    assert term[0, t0] and not trunc[0, : t0 + 1].any() and t0 < 11
    assert trunc[1, 4] and not term[1, :5].any() and not trunc[1, :4].any()  # max_steps_in_episode=5 from step's params
    for row, t in ((0, t0), (1, 4)):
        reached, first = info["final_observation"][row, t], obs[row, t]
        assert not np.allclose(reached, first) and np.abs(first).max() < 0.05  # same-step reset: a new episode's obs
        assert info["terminated"][row, t] == term[row, t] and info["truncated"][row, t] == trunc[row, t]
    np.testing.assert_array_equal(info["final_observation"][0, :t0], obs[0, :t0])  # no end: the same obs
    assert obs.dtype == np.float32 and reward.dtype == np.float32 and (reward == 1.0).all()

    # the export is envhub's own step: the same keys give envhub's obs, final_obs and flags
    state, ts = base.init(key)
    for k in jax.random.split(key, 12)[: t0 + 1]:
        state, ts = base.step(k, state, jnp.asarray(1))
    np.testing.assert_allclose(ts.final_obs, info["final_observation"][0, t0], rtol=1e-6)
    np.testing.assert_allclose(ts.obs, obs[0, t0], rtol=1e-6)


def test_five_returns_and_wrapped_env_take_step_params():
    base = envhub.wrappers.ClipReward(envhub.make("gymnax/CartPole-v1"), -0.5, 0.5)
    env5, params = to_gymnax(base, step_returns=5)
    short = params.replace(env_params=params.env_params.replace(max_steps_in_episode=3))
    obs, reward, done, info = jax.jit(rollout(env5, None, params, 4))(jax.random.key(0), short)
    assert done.tolist() == [False, False, True, False] and (reward == 0.5).all()  # the wrapper's clip, step's limit
    assert info["truncated"].tolist() == [False, False, True, False] and not info["terminated"].any()
    assert not np.allclose(info["final_observation"][2], obs[2])
    assert len(env5.step(jax.random.key(1), env5.reset(jax.random.key(0))[1], 0)) == 5  # eager, params left out


def test_refusals_name_the_fix():
    with pytest.raises(InvalidArgumentError, match="make it without num_envs"):
        to_gymnax(envhub.make("gymnax/CartPole-v1", num_envs=2))
    with pytest.raises(InvalidArgumentError, match="step_returns=4.*give 6.*or 5"):
        to_gymnax(envhub.make("gymnax/CartPole-v1"), step_returns=4)
    multi = Corridor()
    multi.agents = ("a", "b")
    with pytest.raises(
        InvalidArgumentError, match=r"multi-agent.*PettingZoo export \(envhub\.interop\.to_pettingzoo_parallel\)"
    ):
        to_gymnax(multi)
    host = Corridor()
    host.is_jax_native = False
    with pytest.raises(InvalidArgumentError, match="needs a JAX-native env.*to_gymnasium_vector"):
        to_gymnax(host)
    env, params = to_gymnax(envhub.make("gymnax/CartPole-v1"))
    with pytest.raises(InvalidArgumentError, match="must be an EnvhubGymnaxParams"):
        env.reset(jax.random.key(0), params.env_params)
    with pytest.raises(InvalidArgumentError, match="has shape"):
        env.step(
            jax.random.key(0),
            env.reset(jax.random.key(0))[1],
            0,
            params.replace(env_params=jax.tree.map(lambda x: jnp.stack([x, x]), params.env_params)),
        )
    with pytest.raises(NotImplementedError, match="auto-resets inside step"):
        env.step_env(jax.random.key(0), None, 0, params)


def test_missing_gymnax_raises_the_install_line(monkeypatch):
    """``envhub.interop.to_gymnax`` is the export's own function, looked up on each access (``from envhub.interop
    import to_gymnax`` keeps the one it got): without gymnax, a function raising the install line."""
    monkeypatch.delitem(sys.modules, "envhub.interop.gymnax_export")
    monkeypatch.setitem(sys.modules, "gymnax.environments", None)
    with pytest.raises(MissingDependencyError, match=r"needs the Python package 'gymnax'.*envhub\[gymnax\]"):
        envhub.interop.to_gymnax(envhub.make("gymnax/CartPole-v1"))


def test_max_steps_in_episode_is_the_limit_in_force_with_time_limit_wrappers():
    """rejax and PureJaxRL size evaluation loops by ``max_steps_in_episode``: a TimeLimit around the env caps it."""
    wrapped = envhub.wrappers.TimeLimit(envhub.make("gymnax/CartPole-v1"), 40)
    assert wrapped.metadata["time_limit"] == 40
    env, params = to_gymnax(wrapped)
    assert int(params.max_steps_in_episode) == 40
    longer = params.replace(env_params=params.env_params.replace(max_steps_in_episode=1000))
    shorter = params.replace(env_params=params.env_params.replace(max_steps_in_episode=7))
    assert int(longer.max_steps_in_episode) == 40 and int(shorter.max_steps_in_episode) == 7
    corridor = envhub.wrappers.TimeLimit(Corridor(max_steps=20), 5)
    assert corridor.metadata["time_limit"] == 5 and to_gymnax(corridor)[1].max_steps_in_episode == 5


def test_a_squeezed_action_takes_the_action_space_shape():
    """gymnax's continuous envs take a ``Box((1,))`` action as a scalar, and rejax's evaluation hands one (its
    ``act`` squeezes the policy's output): the export gives it the space's shape back; other shapes still fail."""
    env, params = to_gymnax(envhub.make("gymnax/Pendulum-v1"))
    state = env.reset(jax.random.key(0), params)[1]

    @jax.jit
    @jax.vmap
    def step(action):  # as gymnax code calls it: vmapped over environments, under jit
        return env.step(jax.random.key(1), state, action, params)

    scalar, vector = step(jnp.full((3,), 0.5)), step(jnp.full((3, 1), 0.5))
    for a, b in zip(jax.tree.leaves(scalar), jax.tree.leaves(vector), strict=True):
        np.testing.assert_array_equal(a, b)
    assert scalar[0].shape == (3, 3)
    with pytest.raises(envhub.errors.ActionError, match=r"shape \(2,\) where \(1,\) is needed"):
        env.step(jax.random.key(1), state, jnp.zeros(2), params)
