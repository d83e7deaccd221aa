"""Action values are validated by default, once per step, the same on every backend: eagerly at once,
inside jit as a checkify check (``envhub.checked``) that leaves the program pure XLA, and with a host
callback hard stop only for ``validate_actions="strict"``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import envhub
from envhub import spaces
from envhub.core import action_check
from envhub.core.checking import check_values, report_in_jit
from envhub.errors import ActionError, InvalidArgumentError
from envhub.wrappers import ClipAction, Discretize, RecordEpisodeStatistics, TimeLimit, TransformAction, VmapEnvironment

KEY = jax.random.key(0)
# Under jit JAX re-raises the callback's exception wrapped (a JaxRuntimeError); its message keeps ours.
JIT_ERRORS = (jax.errors.JaxRuntimeError, ValueError, RuntimeError)


def _jaxpr(env, state, action):
    return str(jax.make_jaxpr(env.step)(KEY, state, action))


def _callbacks(env, state, action):
    return _jaxpr(env, state, action).count("pure_callback[")


def _checks(env, state, action):
    with report_in_jit():
        return _jaxpr(env, state, action).count("check[debug=True]")


def _rewards_of(env, state):
    """``rollout(actions)``: the rewards of stepping ``env`` from ``state`` with each row of ``actions`` (a scan)."""

    def rollout(actions):
        def body(state, action):
            state, ts = env.step(KEY, state, action)
            return state, ts.reward

        return jax.lax.scan(body, state, actions)[1]

    return rollout


@pytest.fixture
def host_checks(monkeypatch):
    """How often the host side of the check ran (it must not, for valid actions, under jit or vmap)."""
    calls = []
    real = action_check.value_problem
    monkeypatch.setattr(action_check, "value_problem", lambda *args: calls.append(1) or real(*args))
    return calls


def test_out_of_range_discrete_eagerly_names_env_value_and_space(registry):
    env = registry.make("toy/Corridor-v0", num_envs=4)
    state, _ = env.init(KEY)
    with pytest.raises(
        ActionError,
        match=r"Invalid action for 'toy/Corridor-v0': 7 at index \(1,\) is outside \[0, 2\) \(2 of 4 values invalid\); "
        r"the action space is Discrete\(2, shape=\(4,\), dtype=int32\): pass values inside the space.*"
        r"validate_actions=False\) skips this check",
    ):
        env.step(KEY, state, jnp.array([1, 7, 0, -1]))
    env.step(KEY, state, jnp.array([1, 1, 0, 0]))  # valid values step


def test_the_default_jitted_step_is_pure_and_checkify_reports_the_value(registry):
    env = registry.make("toy/Corridor-v0", num_envs=4)
    state, _ = env.init(KEY)
    bad, good = jnp.array([1, 0, 0, -1]), jnp.array([1, 0, 0, 1])
    lowered = jax.jit(env.step).lower(KEY, state, bad).as_text()
    assert "callback" not in lowered  # cacheable and exportable
    jax.block_until_ready(jax.jit(env.step)(KEY, state, bad))  # plain jit does not stop: no host round trip
    message = r"Invalid action for 'toy/Corridor-v0': -1 at index \(3,\) is outside \[0, 2\) \(1 of 4 values invalid\)"
    with pytest.raises(
        ActionError, match=message + r"; the action space is Discrete\(2, shape=\(4,\).*validate_actions"
    ):
        envhub.checked(env.step)(KEY, state, bad)
    if not hasattr(jax, "make_user_context"):
        pytest.skip(f"jax {jax.__version__}: report_in_jit is not part of jit's cache key (docs/errors.md says so)")
    checkified = jax.jit(checkify.checkify(env.step, errors=checkify.user_checks))
    assert checkified(KEY, state, bad)[0].get() is None  # traced without asking: no check in the program
    with report_in_jit():  # jit's cache key includes it: traced again, with the checks
        error, _ = checkified(KEY, state, bad)
    assert error.get() is not None and error.get().startswith(message.replace("\\", "")[:30])
    with pytest.raises(JIT_ERRORS, match=message):  # checkify's own throw keeps the words
        error.throw()
    same = jax.tree.map(np.array_equal, envhub.checked(env.step)(KEY, state, good), jax.jit(env.step)(KEY, state, good))
    assert all(jax.tree.leaves(same))


def test_checked_rollout_under_scan(registry, host_checks):
    env = registry.make("toy/Corridor-v0", num_envs=4)
    checked = envhub.checked(_rewards_of(env, env.init(KEY)[0]))
    good = jnp.ones((5, 4), jnp.int32)
    assert checked(good).shape == (5, 4) and host_checks == []  # nothing reaches the host
    with pytest.raises(ActionError, match=r"'toy/Corridor-v0': 2 at index \(2,\) is outside \[0, 2\)"):
        checked(good.at[3, 2].set(2))
    with pytest.raises(InvalidArgumentError, match="envhub.checked needs a callable"):
        envhub.checked(None)


def test_strict_stops_inside_jit_and_scan(registry, host_checks):
    env = registry.make("toy/Corridor-v0", num_envs=4, validate_actions="strict")
    assert env.validate_actions == "strict"
    state, _ = env.init(KEY)
    step = jax.jit(env.step)
    assert "callback" in step.lower(KEY, state, jnp.zeros(4, jnp.int32)).as_text()
    with pytest.raises(JIT_ERRORS, match=r"ActionError: Invalid action for 'toy/Corridor-v0': -1 at index \(3,\)"):
        step(KEY, state, jnp.array([1, 0, 0, -1]))
    assert step(KEY, state, jnp.array([1, 0, 0, 1]))[1].reward.shape == (4,)

    rollout = jax.jit(_rewards_of(env, state))
    good = jnp.ones((5, 4), jnp.int32)
    host_checks.clear()
    assert rollout(good).shape == (5, 4) and host_checks == []  # valid actions never reach the host
    with pytest.raises(JIT_ERRORS, match=r"ActionError: .*: 2 at index \(2,\) is outside \[0, 2\)"):
        jax.block_until_ready(rollout(good.at[3, 2].set(2)))


def test_user_vmap_over_an_unbatched_env(registry, host_checks):
    env = registry.make("toy/Corridor-v0", validate_actions="strict")
    keys = jax.random.split(KEY, 3)
    states, _ = jax.vmap(env.init)(keys)
    step = jax.jit(jax.vmap(env.step))
    assert step(keys, states, jnp.array([0, 1, 1]))[1].reward.shape == (3,)
    assert host_checks == []  # the predicate is reduced over the vmap axis: still a branch, not a select
    with pytest.raises(JIT_ERRORS, match=r"ActionError: Invalid action for 'toy/Corridor-v0': 5 at index \(2,\)"):
        step(keys, states, jnp.array([0, 1, 5]))
    with pytest.raises(JIT_ERRORS, match=r"ActionError: .*: 3 at index \(0,\)"):  # eager vmap
        jax.vmap(env.step)(keys, states, jnp.array([3, 1, 1]))
    nested = jax.jit(jax.vmap(jax.vmap(env.step)))
    grid = jax.tree.map(lambda x: jnp.stack([x, x]), (keys, states))
    host_checks.clear()
    assert nested(*grid, jnp.ones((2, 3), jnp.int32))[1].reward.shape == (2, 3) and host_checks == []
    with pytest.raises(JIT_ERRORS, match=r"ActionError: .*: 9 at index \(1, 0\)"):
        nested(*grid, jnp.ones((2, 3), jnp.int32).at[1, 0].set(9))
    env.validate_actions = True  # the default: checkify sees each vmapped action
    with pytest.raises(ActionError, match=r"'toy/Corridor-v0': 5 is outside \[0, 2\) \(1 value invalid\)"):
        envhub.checked(jax.vmap(env.step))(keys, states, jnp.array([0, 1, 5]))


def test_tree_and_multidiscrete_values():
    space = spaces.Tree({"move": spaces.MultiDiscrete([3, 4]), "force": spaces.Box(-1.0, 1.0, (2,))})
    ok = {
        "move": jnp.array([2, 3], jnp.int32),
        "force": jnp.array([0.5, 9.0], jnp.float32),
    }  # 9.0: clipped, not refused
    assert check_values("x/Y", space, ok) is ok
    with pytest.raises(
        ActionError, match=r"nan in \['force'\] at index \(1,\) is not finite \(1 of 2 values invalid\)"
    ):
        check_values("x/Y", space, {**ok, "force": jnp.array([0.0, jnp.nan])})
    with pytest.raises(ActionError, match=r"4 in \['move'\] at index \(1,\) is outside \[0, 4\)"):
        check_values("x/Y", space, {**ok, "move": jnp.array([0, 4], jnp.int32)})
    bad = {**ok, "force": jnp.array([jnp.inf, 0.0])}
    with pytest.raises(JIT_ERRORS, match=r"ActionError: Invalid action for 'x/Y': inf in \['force'\] at index \(0,\)"):
        jax.jit(lambda a: check_values("x/Y", space, a, hard_stop=True))(bad)
    for leaf, value in (("force", jnp.array([jnp.inf, 0.0])), ("move", jnp.array([3, 0], jnp.int32))):
        with pytest.raises(ActionError) as traced:
            envhub.checked(lambda a: check_values("x/Y", space, a))({**ok, leaf: value})
        with pytest.raises(ActionError) as eager:
            check_values("x/Y", space, {**ok, leaf: value})
        assert str(traced.value) == str(eager.value) and traced.value.env_id == "x/Y"  # the same words


def test_per_agent_shape_and_dtype_errors_name_the_agent_and_a_whole_array_says_what_it_is():
    """A multi-agent action (a dict per agent): each leaf's problem names its agent; shapes read as ints even where
    the backend gave NumPy ints (jaxmarl's continuous MPE); one array for all agents is described, not printed."""
    box = spaces.Box(0.0, 1.0, (np.int64(5),))
    space = spaces.Tree({"agent_0": box, "agent_1": spaces.Discrete(5), "agent_2": box})
    ok = {"agent_0": jnp.zeros(5), "agent_1": jnp.int32(1), "agent_2": jnp.zeros(5)}
    check = action_check.check_action
    for action, match in [
        (
            {**ok, "agent_2": jnp.zeros(3)},
            r"at action\['agent_2'\]: shape \(3,\) where \(5,\) is needed; .*Box\(.*shape=\(5,\)",
        ),
        ({**ok, "agent_1": 1.5}, r"at action\['agent_1'\]: (1.5 has )?dtype float32 where integers are needed"),
        ({**ok, "agent_0": None}, r"at action\['agent_0'\]: None is not an array"),
        (jnp.zeros((3, 5)), r"structure does not match: an array of shape \(3, 5\) where a dict with the keys "),
        (
            [ok["agent_0"], ok["agent_1"]],
            r"structure does not match: a list of 2 where a dict with the keys \['agent_0', ",
        ),
    ]:
        with pytest.raises(ActionError, match=match):
            check("x/Y", space, action)
        with pytest.raises(ActionError, match=match):  # at trace time: the same words
            jax.jit(lambda a: check("x/Y", space, a))(action)


def test_per_element_multidiscrete_bounds_in_the_traced_message():
    space = spaces.MultiDiscrete([[2, 5], [3, 4]])
    bad = jnp.array([[1, 4], [2, 4]], jnp.int32)
    with pytest.raises(ActionError) as traced:
        envhub.checked(lambda a: check_values("x/Y", space, a))(bad)
    with pytest.raises(ActionError) as eager:
        check_values("x/Y", space, bad)
    assert "4 at index (1, 1) is outside [0, 4)" in str(eager.value) and str(traced.value) == str(eager.value)


def test_once_per_step_whatever_the_wrappers(registry):
    env = registry.make("toy/Corridor-v0", num_envs=4)
    state, _ = env.init(KEY)
    assert _checks(env, state, jnp.zeros(4, jnp.int32)) == 1  # VmapEnvironment's step, not once per env
    assert _callbacks(env, state, jnp.zeros(4, jnp.int32)) == 0
    wrapped = RecordEpisodeStatistics(TimeLimit(env, 5))
    state, _ = wrapped.init(KEY)
    assert (
        _checks(wrapped, state, jnp.zeros(4, jnp.int32)) == 1
        and _callbacks(wrapped, state, jnp.zeros(4, jnp.int32)) == 0
    )
    env.validate_actions = "strict"  # one setting per chain: the wrapper sees it
    assert (
        _callbacks(wrapped, state, jnp.zeros(4, jnp.int32)) == 1
        and _checks(wrapped, state, jnp.zeros(4, jnp.int32)) == 0
    )
    with pytest.raises(ActionError, match="'toy/Corridor-v0': 2 at index"):
        wrapped.step(KEY, state, jnp.array([0, 2, 0, 0]))


def test_the_outermost_space_is_the_one_checked():
    env = Discretize(envhub.make("gymnax/Pendulum-v1"), 5)  # MultiDiscrete outside, Box inside
    state, _ = env.init(KEY)
    with pytest.raises(ActionError, match=r"5 at index \(0,\) is outside \[0, 5\).*MultiDiscrete\(5"):
        env.step(KEY, state, jnp.array([5], jnp.int32))
    clipped = ClipAction(envhub.make("gymnax/Pendulum-v1"))  # any finite value is valid outside, NaN is not
    state, _ = clipped.init(KEY)
    clipped.step(KEY, state, jnp.array([1e6], jnp.float32))
    with pytest.raises(ActionError, match=r"nan at index \(0,\) is not finite"):
        clipped.step(KEY, state, jnp.array([jnp.nan], jnp.float32))


def test_validate_actions_false_really_steps():
    env = envhub.make("gymnax/CartPole-v1", num_envs=2, validate_actions=False)
    assert env.validate_actions is False and env.unwrapped.validate_actions is False
    state, _ = env.init(KEY)
    _, seven = jax.jit(env.step)(KEY, state, jnp.array([7, 7]))
    _, one = jax.jit(env.step)(KEY, state, jnp.array([1, 1]))
    assert not np.allclose(seven.obs, one.obs)  # gymnax ran its physics with 7x the force
    assert _callbacks(env, state, jnp.array([7, 7])) == 0 and _checks(env, state, jnp.array([7, 7])) == 0
    env.validate_actions = True
    with pytest.raises(ActionError, match="7 at index"):
        env.step(KEY, state, jnp.array([7, 7]))
    assert envhub.make("gymnax/CartPole-v1").validate_actions is True
    for bad in ("no", 1, None):
        with pytest.raises(InvalidArgumentError, match=rf"validate_actions={bad!r} must be True .*'strict'.* or False"):
            envhub.make("gymnax/CartPole-v1", validate_actions=bad)
    with pytest.raises(InvalidArgumentError, match=r"validate_actions='yes' must be True"):
        env.validate_actions = "yes"


def test_gradients_flow_through_the_check():
    box = spaces.Box(-1.0, 1.0, (3,))
    a = jnp.array([0.5, -2.0, 3.0], jnp.float32)
    grad = jax.jit(jax.grad(lambda a: (check_values("x/Y", box, a) ** 2).sum()))(a)
    assert np.allclose(grad, 2 * a)  # the check is the identity for differentiation
    env = envhub.make("gymnax/Pendulum-v1")  # through a whole step: reward = -(... + 0.001 u^2)
    state, _ = env.init(KEY)
    grad = jax.jit(jax.grad(lambda u: env.step(KEY, state, u)[1].reward))(jnp.array([0.5], jnp.float32))
    assert np.allclose(grad, [-0.001], atol=1e-6)


CASES = [  # (id, num_envs, a bad action for that batch, what the message says)
    ("gymnax/CartPole-v1", 3, np.array([0, 7, 1], np.int32), r"7 at index \(1,\) is outside \[0, 2\)"),
    ("gymnax/Pendulum-v1", 2, np.array([[0.0], [np.nan]], np.float32), r"nan at index \(1, 0\) is not finite"),
    ("brax/fast", 2, np.array([[np.inf], [0.0]], np.float32), r"inf at index \(0, 0\) is not finite"),
    ("gymnasium/CartPole-v1", 2, np.array([-1, 0], np.int64), r"-1 at index \(0,\) is outside \[0, 2\)"),
    ("gymnasium/Pendulum-v1", 2, np.array([[0.0], [np.nan]], np.float32), r"nan at index \(1, 0\) is not finite"),
    ("envpool/CartPole-v1", 2, np.array([1, 7], np.int32), r"7 at index \(1,\) is outside \[0, 2\)"),
    ("envpool/Pendulum-v1", 2, np.array([[np.nan], [0.0]], np.float32), r"nan at index \(0, 0\) is not finite"),
]


@pytest.mark.parametrize("env_id,num_envs,bad,message", CASES, ids=[c[0] for c in CASES])
def test_every_backend_eager_and_jit(env_id, num_envs, bad, message):
    with envhub.make(env_id, num_envs=num_envs) as env:
        state, _ = env.init(KEY)
        with pytest.raises(ActionError, match=rf"Invalid action for '{env_id}': {message}"):
            env.step(KEY, state, bad)
        step = jax.jit(env.step)
        state, ts = step(KEY, state, np.zeros_like(bad))  # the eagerly refused step left the state usable
        assert ts.reward.shape == (num_envs,) and bool(jnp.isfinite(ts.obs).all())
        if env.unwrapped.is_jax_native:  # in jit: reported by checkify (envhub.checked), the program pure
            assert "callback" not in step.lower(KEY, state, bad).as_text()
            with pytest.raises(ActionError, match=rf"^Invalid action for '{env_id}': {message}"):
                envhub.checked(env.step)(KEY, state, bad)
        else:  # host backends refuse inside their own host callback, before stepping
            with pytest.raises(JIT_ERRORS, match=rf"ActionError: Invalid action for '{env_id}': {message}"):
                jax.block_until_ready(step(KEY, state, bad))
        after, ts = step(KEY, state, np.zeros_like(bad))  # the refused call left the state usable
        assert ts.reward.shape == (num_envs,) and bool(jnp.isfinite(ts.obs).all())


@pytest.mark.parametrize("env_id,num_envs,bad,message", [c for c in CASES if c[0].split("/")[0] in ("gymnax", "brax")])
def test_strict_stops_jax_native_backends_in_jit(env_id, num_envs, bad, message):
    env = envhub.make(env_id, num_envs=num_envs, validate_actions="strict")
    state, _ = env.init(KEY)
    with pytest.raises(JIT_ERRORS, match=rf"ActionError: Invalid action for '{env_id}': {message}"):
        jax.block_until_ready(jax.jit(env.step)(KEY, state, bad))
    assert jax.jit(env.step)(KEY, state, np.zeros_like(bad))[1].reward.shape == (num_envs,)


def _step_off(env_id, action, num_envs=2):
    """Step a fresh env (validate_actions=False) from the same seed, jitted; return the TimeStep."""
    with envhub.make(env_id, num_envs=num_envs, validate_actions=False) as env:
        state, _ = env.init(KEY)
        return jax.device_get(jax.jit(env.step)(KEY, state, action)[1])


def test_validate_actions_false_hands_every_backend_the_value():
    # gymnax: 7 runs CartPole's physics with 7x the force of action 1
    seven, one = _step_off("gymnax/CartPole-v1", np.array([7, 7])), _step_off("gymnax/CartPole-v1", np.array([1, 1]))
    assert not np.allclose(seven.obs, one.obs)
    # brax's test env "fast" moves where action > 0: NaN steps like 0
    nan = np.full((2, 1), np.nan, np.float32)
    assert np.allclose(_step_off("brax/fast", nan).obs, _step_off("brax/fast", np.zeros((2, 1), np.float32)).obs)
    # gymnasium's Pendulum steps a NaN torque into NaN observations
    assert np.isnan(_step_off("gymnasium/Pendulum-v1", nan).obs).any()


@pytest.mark.requires_plugin("envpool")
def test_validate_actions_false_hands_envpool_the_value():
    # envpool treats an out-of-range discrete action as 0
    seven = _step_off("envpool/CartPole-v1", np.array([7, 7], np.int32))
    assert np.allclose(seven.obs, _step_off("envpool/CartPole-v1", np.array([0, 0], np.int32)).obs)


def test_checked_falls_back_to_a_hard_stop_where_checkify_cannot_go(registry):
    """checkify refuses a jax.vmap of a while loop (a batched brax step): envhub.checked stops on the host instead."""

    def through_a_loop(action):  # a while loop whose trip count depends on the (vmapped) action
        return jax.lax.while_loop(lambda c: c[0] < action, lambda c: (c[0] + 1, c[1]), (0, action))[1]

    env = VmapEnvironment(TransformAction(registry.make("toy/Corridor-v0"), through_a_loop), 4)
    state, _ = env.init(KEY)
    step = envhub.checked(env.step)
    good = jnp.array([1, 0, 0, 1])
    reference = step(KEY, state, good)
    with pytest.raises(ActionError, match=r"^Invalid action for 'toy/Corridor-v0': 3 at index \(2,\) is outside"):
        step(KEY, state, good.at[2].set(3))
    assert all(jax.tree.leaves(jax.tree.map(np.array_equal, step(KEY, state, good), reference)))


def test_bools_are_not_numbers_eagerly_in_jit_on_the_host_and_in_the_gymnasium_export():
    """``True`` was silently action 1 of a ``Discrete`` space (1.0 of a float ``Box``): refused like any wrong dtype,
    at trace time (the dtype is static), on every surface that reuses ``check_action``."""
    ints = r"dtype bool where integers are needed; the action space is Discrete\(2, dtype=int32\): pass integers, "
    ints += r"not bools \(e\.g\. int\(action\), or action\.astype\(int\) for an array\)\."
    for env_id in ("gymnax/CartPole-v1", "gymnasium/CartPole-v1"):
        with envhub.make(env_id) as env:
            state, _ = env.init(KEY)
            for action in (True, np.bool_(True), jnp.bool_(True), jnp.array(False)):
                shown = str(bool(action))
                with pytest.raises(ActionError, match=rf"^Invalid action for '{env_id}': {shown} has {ints}"):
                    env.step(KEY, state, action)
                with pytest.raises(ActionError, match=rf"^Invalid action for '{env_id}': {ints}"):  # a tracer's value
                    jax.jit(env.step)(KEY, state, action)  # is unknown: the dtype is enough
                with pytest.raises(ActionError, match=rf"^Invalid action for '{env_id}': {ints}"):
                    envhub.checked(env.step)(KEY, state, action)
            assert env.step(KEY, state, np.int64(1))[1].obs.shape == (4,)  # the refusals left the state usable
    gym = envhub.interop.to_gymnasium(envhub.make("gymnax/CartPole-v1"))
    gym.reset(seed=0)
    for action in (True, np.bool_(False)):
        with pytest.raises(ActionError, match=rf"^Invalid action for 'gymnax/CartPole-v1': {action} has {ints}"):
            gym.step(action)
    assert gym.step(1)[0].shape == (4,)
    batched = envhub.make("gymnax/CartPole-v1", num_envs=2)
    with pytest.raises(ActionError, match=r"dtype bool where integers are needed; .*Discrete\(2, shape=\(2,\)"):
        batched.step(KEY, batched.init(KEY)[0], np.array([True, False]))
    floats = r"True has dtype bool where floats are needed; .*pass floats, not bools \(e\.g\. float\(action\), or"
    space = spaces.Box(-1.0, 1.0, ())
    for on_host in (False, True):
        with pytest.raises(ActionError, match=rf"^Invalid action for 'x/Y': {floats}"):
            action_check.check_action("x/Y", space, True, on_host=on_host)
    assert action_check.check_action("x/Y", space, 1).dtype == np.float32  # ints still pass for floats
    with pytest.raises(ActionError, match=r"at action\['agent_1'\]: True has dtype bool where integers are needed"):
        action_check.host_action_checker("x/Y", spaces.Tree({"agent_0": space, "agent_1": spaces.Discrete(3)}))(
            {"agent_0": 0.5, "agent_1": True}, True
        )
