import gc

import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import envhub
from envhub import testing
from envhub.plugin import ClosedEnvironmentError, HostEnvError, HostVmapError, StaleStateError, key_to_seeds, spaces

KEY = jax.random.key(0)


# --- the conformance kit over a representative set of ids ----------------------------------------


class TestCartPole(testing.ConformanceTests):
    env_id = "gymnasium/CartPole-v1"


class TestCartPoleBatched(testing.ConformanceTests):
    env_id = "gymnasium/CartPole-v1"
    make_kwargs = {"num_envs": 3}


class TestPendulum(testing.ConformanceTests):  # continuous actions; a time limit only
    env_id = "gymnasium/Pendulum-v1"


class TestMountainCarContinuousBatched(testing.ConformanceTests):
    env_id = "gymnasium/MountainCarContinuous-v0"
    make_kwargs = {"num_envs": 2}


class TestAcrobot(testing.ConformanceTests):
    env_id = "gymnasium/Acrobot-v1"


class TestBlackjack(testing.ConformanceTests):  # Tuple observation space
    env_id = "gymnasium/Blackjack-v1"


class TestFrozenLakeBatched(testing.ConformanceTests):  # Discrete observations, info["prob"]
    env_id = "gymnasium/FrozenLake-v1"
    make_kwargs = {"num_envs": 4}


class TestCliffWalking(testing.ConformanceTests):  # deterministic: keys_matter=False is registered
    env_id = "gymnasium/CliffWalking-v1" if "CliffWalking-v1" in gymnasium.registry else "gymnasium/CliffWalking-v0"


# --- ground truth ----------------------------------------------------------------------------------


@pytest.mark.parametrize("num_envs", [None, 4])
@pytest.mark.parametrize("limit, push", [(8, False), (500, True)], ids=["truncations", "terminations"])
def test_matches_gymnasium_vector_env_step_for_step(num_envs, limit, push):
    """envhub gives the obs, rewards, flags and final_obs of gymnasium's own SAME_STEP vector env.

    Random actions under ``max_episode_steps=8`` end episodes by truncation; always pushing right
    (without a short limit) ends them by termination.
    """
    n = num_envs or 1
    env = envhub.make("gymnasium/CartPole-v1", num_envs=num_envs, max_episode_steps=limit, vectorization_mode="sync")
    actions = np.array(jax.random.randint(jax.random.key(1), (40, n), 0, 2), np.int32)
    if push:
        actions[:] = 1
    state, first = env.init(KEY)
    step = jax.jit(env.step)
    got = []
    for a in actions:
        state, ts = step(KEY, state, a if num_envs else a[0])
        got.append(jax.tree.map(np.asarray, ts))
    env.close()

    raw = gymnasium.make_vec(
        "CartPole-v1",
        num_envs=n,
        vectorization_mode="sync",
        max_episode_steps=limit,
        vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
    )
    obs, _ = raw.reset(seed=[int(s) for s in key_to_seeds(KEY, n)])
    np.testing.assert_array_equal(np.asarray(first.obs).reshape(obs.shape), obs)
    ends = 0
    for a, ts in zip(actions, got):
        obs, reward, terminated, truncated, info = raw.step(a)
        final = obs.copy()
        for i in np.flatnonzero(terminated | truncated):
            final[i] = info["final_obs"][i]
        for name, want in [
            ("obs", obs),
            ("reward", reward),
            ("terminated", terminated),
            ("truncated", truncated & ~terminated),
            ("final_obs", final),
        ]:
            np.testing.assert_array_equal(getattr(ts, name).reshape(want.shape), want, err_msg=name)
        ends += int((terminated if push else truncated).sum())
    raw.close()
    assert ends >= 2 * n  # several episodes ended the intended way, and final_obs was compared there


@pytest.mark.parametrize(
    "num_envs, limit, push", [(None, 500, True), (4, 8, False)], ids=["terminations", "truncations"]
)
def test_numpy_cartpole_matches_gymnasiums_next_step_env(num_envs, limit, push):
    """On gymnasium's NumPy CartPoleVectorEnv, envhub resets in the step where gymnasium resets on the next one.

    Ground truth: gymnasium's own vector env, stepped alongside. Where it reports an episode end,
    its following step (whose action it ignores) returns the reset observations: envhub must show
    them in the ending step, with gymnasium's terminal observation in ``final_obs``. With 4 envs
    and ``max_episode_steps=8`` all 4 end together, so the reference stays in lockstep.
    """
    from envhub_gymnasium.same_step import combined_seed

    n = num_envs or 1
    env = envhub.make("gymnasium/CartPole-v1", num_envs=num_envs, max_episode_steps=limit)
    assert env.vectorization_mode == "vector_entry_point" and "by envhub" in env.metadata["autoreset"]
    actions = np.ones((60, n), np.int32) if push else np.array(jax.random.randint(KEY, (60, n), 0, 2), np.int32)
    raw = gymnasium.make_vec(
        "CartPole-v1", num_envs=n, vectorization_mode="vector_entry_point", max_episode_steps=limit
    )
    state, first = jax.jit(env.init)(KEY)
    want_obs, _ = raw.reset(seed=combined_seed([int(s) for s in key_to_seeds(KEY, n)]))
    np.testing.assert_array_equal(np.asarray(first.obs).reshape(want_obs.shape), want_obs)
    step, ends = jax.jit(env.step), 0
    for a in actions:
        state, ts = step(KEY, state, a if num_envs else a[0])
        final, reward, terminated, truncated, _ = raw.step(a)
        done = terminated | truncated
        assert done.all() or not done.any(), "the reference left lockstep"
        obs = raw.step(np.zeros(n, np.int64))[0] if done.any() else final  # gymnasium's reset step
        for name, want in [
            ("obs", obs),
            ("final_obs", final),
            ("reward", reward),
            ("terminated", terminated),
            ("truncated", truncated & ~terminated),
        ]:
            np.testing.assert_array_equal(np.asarray(getattr(ts, name)).reshape(want.shape), want, err_msg=name)
        ends += int((terminated if push else truncated).sum())
    env.close()
    raw.close()
    assert ends >= 2 * n


def test_numpy_cartpole_partial_reset_is_seeded_by_the_key():
    with envhub.make("gymnasium/CartPole-v1", num_envs=4) as env:
        state, _ = env.init(KEY)
        for _ in range(3):
            state, ts = env.step(KEY, state, np.ones(4, np.int32))
        mask = np.array([True, False, True, False])
        outcomes = []
        for key in (jax.random.key(1), jax.random.key(2)):
            state, after = env.reset(key, state, where=mask)
            outcomes.append(np.asarray(after.obs))
            assert np.all(np.abs(outcomes[-1][mask]) <= 0.05)  # CartPole's reset distribution
    assert not np.array_equal(outcomes[0][mask], outcomes[1][mask])


def test_info_keys_selects_and_names_what_exists(test_envs):
    with envhub.make("gymnasium/EnvhubDict-v0", info_keys=()) as env:
        assert env.info_spec == {} and env.init(KEY)[1].info == {}
    with pytest.raises(envhub.errors.InvalidArgumentError, match=r"info_keys=\['x'\].*reports \['t'\]"):
        envhub.make("gymnasium/EnvhubDict-v0", info_keys=["x"])


def test_terminated_wins_over_a_time_limit_on_the_same_step():
    """Pushing right, the pole falls at step L; with max_episode_steps=L gymnasium sets both flags there."""

    def push_until_done(env):
        state, _ = env.init(KEY)
        for t in range(1, 200):
            state, ts = env.step(KEY, state, 1)
            if ts.done:
                return t, ts

    with envhub.make("gymnasium/CartPole-v1") as env:
        length, ts = push_until_done(env)
    assert bool(ts.terminated)
    with envhub.make("gymnasium/CartPole-v1", max_episode_steps=length) as env:
        assert push_until_done(env)[0] == length
        _, ts = push_until_done(env)
    assert bool(ts.terminated) and not bool(ts.truncated)


# --- keys, stale states, close ------------------------------------------------------------------------


def trajectory(env, key):
    run = testing.rollout_fn(env, 30)
    return run(key, jax.random.key(42))


def test_same_key_same_trajectory_different_key_different():
    with envhub.make("gymnasium/CartPole-v1", num_envs=2) as env:
        a, b, c = (
            trajectory(env, jax.random.key(1)),
            trajectory(env, jax.random.key(1)),
            trajectory(env, jax.random.key(2)),
        )
    assert all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)))
    assert not all(np.array_equal(x, y) for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(c)))


def test_reset_seeds_from_its_key():
    with envhub.make("gymnasium/CartPole-v1") as env:
        state, _ = env.init(KEY)
        state, first = env.reset(jax.random.key(5), state)
        state, again = env.reset(jax.random.key(5), state)
        state, other = env.reset(jax.random.key(6), state)
    np.testing.assert_array_equal(first.obs, again.obs)
    assert not np.array_equal(first.obs, other.obs)


def test_stale_state_raises_eagerly_and_under_jit():
    env = envhub.make("gymnasium/CartPole-v1")
    old, _ = env.init(KEY)
    new, _ = env.step(KEY, old, 0)
    with pytest.raises(
        StaleStateError,
        match=r"state from step 0, but its newest state is from step 1: host environments "
        r"live outside JAX and cannot branch or rewind\. Always pass the state",
    ):
        env.step(KEY, old, 1)
    with pytest.raises(StaleStateError, match="cannot branch or rewind"):
        env.reset(KEY, old)
    with pytest.raises(
        jax.errors.JaxRuntimeError,
        match=r"StaleStateError: Environment 'gymnasium/CartPole-v1' was given a "
        r"state from step 0.*Always pass the state returned",
    ):
        jax.block_until_ready(jax.jit(env.step)(KEY, old, 1))
    state, ts = jax.jit(env.step)(KEY, new, 1)  # the newest state still works after the error
    assert int(state.version) == 2
    env.close()


def test_state_of_another_environment_is_refused():
    with envhub.make("gymnasium/CartPole-v1") as a, envhub.make("gymnasium/CartPole-v1") as b:
        state, _ = a.init(KEY)
        with pytest.raises(StaleStateError, match="whose host environment it does not hold"):
            b.step(KEY, state, 0)


def test_use_after_close_raises():
    env = envhub.make("gymnasium/CartPole-v1", num_envs=2)
    state, _ = env.init(KEY)
    step = jax.jit(env.step)
    step(KEY, state, jnp.zeros(2, jnp.int32))  # compiled before close
    env.close()
    assert env.live_host_envs() == 0
    with pytest.raises(
        ClosedEnvironmentError, match=r"step\(\) called on environment 'gymnasium/CartPole-v1' after close\(\)"
    ):
        env.step(KEY, state, jnp.zeros(2, jnp.int32))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"ClosedEnvironmentError: step\(\) called on environment"):
        jax.block_until_ready(step(KEY, state, jnp.zeros(2, jnp.int32)))


def test_garbage_collection_closes_host_envs():
    closed = []
    env = envhub.make("gymnasium/CartPole-v1")
    env.init(KEY)
    for slot in env._bridge.table.slots.values():
        original = slot.host.close
        slot.host.close = lambda original=original: (closed.append(1), original())
    del env
    gc.collect()
    assert closed == [1]


def rss_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def test_thousand_init_close_cycles_leave_nothing_alive(capsys):
    def cycle():
        env = envhub.make("gymnasium/CartPole-v1")
        state, _ = env.init(KEY)
        env.step(KEY, state, 0)
        env.close()
        return env.live_host_envs()

    for _ in range(50):  # warm-up: first-use allocations are not a leak
        cycle()
    gc.collect()
    before = rss_mb()
    alive = sum(cycle() for _ in range(1000))
    gc.collect()
    growth = rss_mb() - before
    assert alive == 0
    with capsys.disabled():
        print(f"\n1000 make/init/step/close cycles: RSS grew {growth:.1f} MB")
    assert growth < 20, f"RSS grew {growth:.1f} MB over 1000 cycles"


# --- vmap -------------------------------------------------------------------------------------------


def test_vmap_gives_one_host_env_per_key_and_routes_actions():
    env = envhub.make("gymnasium/CartPole-v1")
    keys = jax.random.split(KEY, 3)
    actions = jnp.array([[0, 1, 1], [1, 0, 0], [1, 1, 0]], jnp.int32)  # (key, time)

    def run(key, acts):
        state, _ = env.init(key)

        def body(state, a):
            state, ts = env.step(key, state, a)
            return state, ts.obs

        return jax.lax.scan(body, state, acts)[1]

    mapped = jax.jit(jax.vmap(run))(keys, actions)
    for i in range(3):
        np.testing.assert_array_equal(mapped[i], jax.jit(run)(keys[i], actions[i]))
    env.close()


def test_vmap_over_actions_of_one_state_names_num_envs():
    with envhub.make("gymnasium/CartPole-v1") as env:
        state, _ = env.init(KEY)
        with pytest.raises(
            HostVmapError,
            match=r"maps the action or key of step\(\) over 2 values but not the state.*"
            r"num_envs=N",
        ):
            jax.vmap(lambda a: env.step(KEY, state, a))(jnp.array([0, 1], jnp.int32))


# --- spaces, info, kwargs -------------------------------------------------------------------------


def test_backend_kwargs_pass_through():
    with envhub.make("gymnasium/CartPole-v1", sutton_barto_reward=True, max_episode_steps=3) as env:
        state, _ = env.init(KEY)
        rewards, truncated = [], []
        for _ in range(3):
            state, ts = env.step(KEY, state, 0)
            rewards.append(float(ts.reward))
            truncated.append(bool(ts.truncated))
    assert rewards == [0.0, 0.0, 0.0] and truncated == [False, False, True]
    with envhub.make("gymnasium/CartPole-v1", render_mode="rgb_array") as env:
        assert env._bridge.table.spare.render_mode == "rgb_array"


def test_discrete_start_and_multidiscrete_map_to_envhub_spaces():
    from envhub.plugin import from_gymnasium_space

    space = from_gymnasium_space(
        gymnasium.spaces.Dict(
            {
                "d": gymnasium.spaces.Discrete(3, start=-1),
                "m": gymnasium.spaces.MultiDiscrete([2, 5], start=[1, 0]),
                "t": gymnasium.spaces.Tuple(
                    (gymnasium.spaces.MultiBinary(3), gymnasium.spaces.Box(0, 1, (2,), np.float64))
                ),
            }
        )
    )
    assert space == spaces.Tree(
        {
            "d": spaces.Discrete(3, start=-1),
            "m": spaces.MultiDiscrete([2, 5], start=[1, 0]),
            "t": (spaces.Box(0, 1, (3,), np.int8), spaces.Box(0.0, 1.0, (2,), np.float32)),
        }
    )


class DictEnv(gymnasium.Env):
    """Dict observations, a Discrete(start=1) part, a Dict action; `raise_at` raises inside step."""

    def __init__(self, raise_at=None):
        self.observation_space = gymnasium.spaces.Dict(
            {
                "pos": gymnasium.spaces.Box(-10, 10, (2,), np.float32),
                "room": gymnasium.spaces.Discrete(4, start=1),
            }
        )
        self.action_space = gymnasium.spaces.Dict(
            {
                "move": gymnasium.spaces.Discrete(3, start=-1),
                "power": gymnasium.spaces.Box(0, 1, (), np.float32),
            }
        )
        self.raise_at = raise_at

    def _obs(self):
        return {"pos": self.pos.copy(), "room": self.room}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        self.room, self.t = 1, 0
        return self._obs(), {"t": self.t}

    def step(self, action):
        self.t += 1
        if self.t == self.raise_at:
            raise ValueError("the reactor melted down")
        self.pos = np.clip(self.pos + np.float32(action["move"]) * action["power"], -10, 10).astype(np.float32)
        self.room = 1 + self.t % 4
        return self._obs(), 1.0, bool(self.t % 5 == 0), False, {"t": self.t}


@pytest.fixture(scope="module")
def test_envs():
    gymnasium.register("EnvhubDict-v0", entry_point=DictEnv, max_episode_steps=7)
    gymnasium.register("EnvhubBoom-v0", entry_point=DictEnv, kwargs={"raise_at": 3})
    yield
    del gymnasium.registry["EnvhubDict-v0"], gymnasium.registry["EnvhubBoom-v0"]


def dict_action(n=None):
    shape = () if n is None else (n,)
    return {"move": jnp.full(shape, 1, jnp.int32), "power": jnp.full(shape, 0.5, jnp.float32)}


@pytest.mark.parametrize("num_envs", [None, 2])
def test_dict_observation_env_registered_in_the_test(test_envs, num_envs):
    env = envhub.make("gymnasium/EnvhubDict-v0", num_envs=num_envs)
    assert env.single_observation_space == spaces.Tree(
        {"pos": spaces.Box(-10, 10, (2,)), "room": spaces.Discrete(4, start=1)}
    )
    assert env.single_action_space == spaces.Tree({"move": spaces.Discrete(3, start=-1), "power": spaces.Box(0, 1, ())})
    assert env.info_spec == {"t": jax.ShapeDtypeStruct((), jnp.int32)}
    state, first = env.init(KEY)
    step = jax.jit(env.step)
    steps = []
    for _ in range(12):
        state, ts = step(KEY, state, dict_action(num_envs))
        steps.append(ts)
    steps = jax.tree.map(lambda *xs: np.stack(xs), *steps)
    env.close()
    lead = () if num_envs is None else (num_envs,)
    assert steps.obs["pos"].shape == (12, *lead, 2) and steps.obs["room"].dtype == np.int32
    # Episodes end at t=5 (terminated), 10 (terminated); final_obs is the reached obs, obs the new episode's.
    terminated = steps.terminated.reshape(12, -1)[:, 0]
    assert terminated.tolist() == [t in (5, 10) for t in range(1, 13)]
    assert steps.final_obs["room"].reshape(12, -1)[4, 0] == 1 + 5 % 4 and steps.obs["room"].reshape(12, -1)[4, 0] == 1
    assert steps.info["t"].reshape(12, -1)[:, 0].tolist() == [1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2]
    np.testing.assert_allclose(
        steps.obs["pos"].reshape(12, -1, 2)[1, 0] - steps.obs["pos"].reshape(12, -1, 2)[0, 0], 0.5
    )
    assert jax.tree.structure(first) == jax.tree.structure(ts)


def test_dict_observation_env_passes_the_kit(test_envs):
    results = testing.run_checks(
        lambda **kw: envhub.make("gymnasium/EnvhubDict-v0", **kw),
        testing.Options(time_limit_kwarg="max_episode_steps", time_limit=3),
    )
    assert not any(r.failed for r in results), testing.format_report(results)
    assert {r.name for r in results if r.skipped} == {"pure", "export", "params"}  # host: no pure XLA, no params


def test_backend_exception_surfaces_as_host_env_error(test_envs):
    env = envhub.make("gymnasium/EnvhubBoom-v0")
    state, _ = env.init(KEY)
    state, _ = env.step(KEY, state, dict_action())
    state, _ = env.step(KEY, state, dict_action())
    with pytest.raises(
        HostEnvError,
        match=r"Environment 'gymnasium/EnvhubBoom-v0' raised in step\(\): ValueError: the "
        r"reactor melted down\. The host environment is now in an unknown state: close",
    ):
        env.step(KEY, state, dict_action())
    env.close()

    env = envhub.make("gymnasium/EnvhubBoom-v0")

    def rollout(key):
        state, _ = env.init(key)
        return jax.lax.scan(lambda s, _: env.step(key, s, dict_action()), state, None, length=5)

    with pytest.raises(
        jax.errors.JaxRuntimeError,
        match=r"HostEnvError: Environment 'gymnasium/EnvhubBoom-v0' raised in "
        r"step\(\): ValueError: the reactor melted down.*close\(\) it",
    ):
        jax.block_until_ready(jax.jit(rollout)(KEY))
    env.close()
    with envhub.make("gymnasium/CartPole-v1") as other:  # the runtime still works: no hang, no crash
        state, _ = jax.jit(other.init)(KEY)
        jax.block_until_ready(jax.jit(other.step)(KEY, state, 1))


# --- registry ----------------------------------------------------------------------------------------


def test_every_registry_id_is_listed_and_missing_extras_are_explained():
    listed = {spec.name: spec for spec in envhub.list_envs("gymnasium")}
    assert set(gymnasium.registry) <= set(listed)
    assert listed["CartPole-v1"].available and listed["CartPole-v1"].batching == "native"
    try:
        import Box2D  # noqa: F401
    except ImportError:
        assert 'pip install "gymnasium[box2d]"' in listed["LunarLander-v3"].unavailable


def test_import_envhub_does_not_import_gymnasium():
    import subprocess
    import sys

    code = "import envhub, envhub.host.environment, sys; envhub.list_backends(); print('gymnasium' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_halfcheetah_builds_without_mujocos_settotalmass_notice_or_its_log_file(tmp_path, monkeypatch, capfd):
    """gymnasium's half_cheetah.xml sets ``settotalmass``, which MuJoCo 3.3+ deprecates: MuJoCo printed that once per
    sub-env and appended it to MUJOCO_LOG.TXT in the working folder (``envhub_gymnasium.quiet.MUJOCO_NOTICES``);
    the handler set before is back afterwards. A non-MuJoCo env does not import mujoco for it."""
    pytest.importorskip("mujoco", reason="gymnasium's MuJoCo envs need mujoco: pip install 'gymnasium[mujoco]'")
    import mujoco

    monkeypatch.chdir(tmp_path)
    env = envhub.make("gymnasium/HalfCheetah-v5", num_envs=2)
    env.init(jax.random.key(0))
    env.close()
    assert "settotalmass" not in capfd.readouterr().err and list(tmp_path.iterdir()) == []
    assert mujoco.get_mju_user_warning() is None
