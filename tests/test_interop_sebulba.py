"""``envhub.interop.sebulba_factory``: the vector env of Stoix's Sebulba actors (``factory(num_envs)``, ``reset(seed=
list)``, ``step``), on a JAX-native env (gymnax) and a host one (gymnasium): Stoa TimeSteps with TERMINATED and
TRUNCATED kept apart (discount 0 and 1), ``extras["metrics"]`` equal to envhub's own episode statistics for the same
seeds, ``extras["next_obs"]`` envhub's ``final_obs``, arrays on the device given, vector envs in threads independent;
the refusals.

Cheap on purpose: two envs of CartPole, 20 steps (time limit 12: one env falls over, the other is cut), one compiled
program per vector env; the refusals compile nothing."""

from __future__ import annotations

import pickle
import sys
import threading
from typing import Any

import pytest

stoa = pytest.importorskip("stoa", reason="sebulba_factory needs stoa-env: pip install 'envhub[stoa]'")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from stoa import StepType  # noqa: E402
from stoa.core_wrappers.episode_metrics import get_final_step_metrics  # noqa: E402

import envhub  # noqa: E402
from envhub import interop, spaces  # noqa: E402
from envhub.errors import ClosedEnvironmentError, InvalidArgumentError, MissingDependencyError  # noqa: E402
from envhub.interop.compiled import Runner  # noqa: E402
from envhub.plugin import JaxEnvironment, JaxStep, hookimpl  # noqa: E402
from envhub.wrappers import RecordEpisodeStatistics  # noqa: E402

N, STEPS, LIMIT, SEEDS = 2, 20, 12, [3, 4]
FIRST, MID, TERMINATED, TRUNCATED = (
    int(t) for t in (StepType.FIRST, StepType.MID, StepType.TERMINATED, StepType.TRUNCATED)
)
IDS = [
    pytest.param("gymnax/CartPole-v1", marks=pytest.mark.requires_plugin("gymnax"), id="gymnax"),
    pytest.param("gymnasium/CartPole-v1", marks=pytest.mark.requires_plugin("gymnasium"), id="gymnasium"),
]


def actions(t: int) -> np.ndarray:
    """Env 0 always pushes left (CartPole falls over: terminated), env 1 alternates (it lasts: truncated at LIMIT)."""
    return np.array([0, t % 2], np.int32)


def rollout(envs: Any, seeds: list[int]) -> list[Any]:
    """The TimeSteps of ``reset(seed=seeds)`` and ``STEPS`` steps, as a Sebulba actor makes them."""
    out = [envs.reset(seed=seeds)]
    return out + [envs.step(actions(t)) for t in range(STEPS)]


@pytest.mark.parametrize("env_id", IDS)
def test_a_factory_steps_as_a_sebulba_actor_with_envhubs_episodes_and_statistics(env_id):
    device = jax.devices("cpu")[0]
    factory = interop.sebulba_factory(env_id, device=device, max_episode_steps=LIMIT)
    envs = factory(N)
    steps = rollout(envs, SEEDS)

    reference = Runner(RecordEpisodeStatistics(envhub.make(env_id, num_envs=N, max_episode_steps=LIMIT)), 0)
    ref = [reference.reset(SEEDS)] + [reference.step(actions(t)) for t in range(STEPS)]

    first = steps[0]
    assert first.observation.shape == (N, 4) and (np.asarray(first.step_type) == FIRST).all()
    assert (np.asarray(first.discount) == 1).all() and not np.asarray(first.extras["metrics"]["is_terminal_step"]).any()
    for ts, r in zip(steps, ref, strict=True):
        assert all(leaf.devices() == {device} for leaf in jax.tree.leaves(ts))  # every array placed on the device
        np.testing.assert_array_equal(ts.observation, r.obs)  # the same episodes for the same seeds
        np.testing.assert_array_equal(ts.reward, r.reward)
    for ts, r in zip(steps[1:], ref[1:], strict=True):
        kind = np.asarray(ts.step_type)
        expected = np.where(r.terminated, TERMINATED, np.where(r.truncated, TRUNCATED, MID))
        np.testing.assert_array_equal(kind, expected)
        np.testing.assert_array_equal(ts.discount, np.where(r.terminated, 0.0, 1.0))
        np.testing.assert_array_equal(ts.last(), r.terminated | r.truncated)
        np.testing.assert_array_equal(ts.extras["next_obs"], r.final_obs)  # the observation reached
        metrics = ts.extras["metrics"]
        np.testing.assert_array_equal(metrics["is_terminal_step"], r.terminated | r.truncated)
        np.testing.assert_array_equal(metrics["episode_return"], r.info["last_episode_return"])
        np.testing.assert_array_equal(metrics["episode_length"], r.info["last_episode_length"])
    kinds = np.stack([np.asarray(ts.step_type) for ts in steps[1:]])
    assert (kinds[:, 0] == TERMINATED).any() and (kinds[:, 1] == TRUNCATED).sum() == 1  # both ends happen
    ended, any_end = get_final_step_metrics(jax.tree.map(lambda *x: np.stack(x), *[s.extras["metrics"] for s in steps]))
    assert any_end and (ended["episode_length"] > 0).all() and LIMIT in ended["episode_length"]  # Stoix's logging

    assert int(envs.action_space().num_values) == 2 and envs.observation_space().generate_value().shape == (4,)
    again = pickle.loads(pickle.dumps(envs))  # pickles as the factory's call: a fresh env, made by id
    assert again.num_envs == N and again.env is not envs.env and again.env.id == env_id
    again.close()
    envs.close()
    assert envs.env.closed  # the env the factory made is the vector env's
    with pytest.raises(ClosedEnvironmentError):
        envs.step(actions(0))


@pytest.mark.requires_plugin("gymnax")
def test_vector_envs_stepped_in_threads_at_once_stay_independent():
    """One factory, as Stoix shares it between its actor threads: each vector env keeps its own key, state and
    counters, so a thread's rollout equals the one its env gives alone, afterwards, from the same seeds."""
    factory = interop.sebulba_factory("gymnax/CartPole-v1", max_episode_steps=LIMIT)  # device: each thread's
    envs = [factory(N), factory(N)]
    seeds, cpu = [[5, 6], [7, 8]], jax.devices("cpu")[0]
    out: dict[int, list[Any]] = {}
    start = threading.Barrier(2)

    def actor(i: int) -> None:
        start.wait()
        with jax.default_device(cpu):  # as a Stoix actor pins its device
            steps = rollout(envs[i], seeds[i])
        assert all(isinstance(leaf, np.ndarray) for leaf in jax.tree.leaves(steps))  # no device given: NumPy
        out[i] = jax.tree.map(np.asarray, steps)

    threads = [threading.Thread(target=actor, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(2):
        alone = jax.tree.map(np.asarray, rollout(envs[i], seeds[i]))
        jax.tree.map(np.testing.assert_array_equal, out[i], alone)
        envs[i].close()
    assert not np.array_equal(out[0][0].observation, out[1][0].observation)  # two streams, not one


@pytest.mark.requires_plugin("envpool")
@pytest.mark.filterwarnings("ignore:.*precision lowered by casting:UserWarning")  # the raw envpool's spaces
def test_envpool_through_the_factory_reports_envpools_own_episode_statistics(monkeypatch):
    """envpool stepped on the host (no compiled call): each env's first episode, at its terminal step, has the
    return and length envpool itself gives for the same seed and actions (its rewards summed, its ``elapsed_step``);
    a second reset restarts the same host env (none leaks)."""
    import envpool

    seen, make = {}, envpool.make
    monkeypatch.setattr(envpool, "make", lambda task, **kw: seen.update(kw) or make(task, **kw))  # the seeds given
    envs = interop.sebulba_factory("envpool/CartPole-v1")(N)
    first = envs.reset(seed=SEEDS)
    monkeypatch.undo()
    acts = np.random.default_rng(0).integers(0, 2, (40, N)).astype(np.int32)
    steps = [envs.step(a) for a in acts]
    raw = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=N, env_seed=seen["env_seed"][:N])  # logical i
    raw_first = raw.reset()[0]
    np.testing.assert_array_equal(first.observation, raw_first)
    raw_steps = [raw.step(a) for a in acts]
    for i in range(N):
        end = next(t for t, ts in enumerate(steps) if ts.extras["metrics"]["is_terminal_step"][i])
        raw_end = next(t for t, (_, _, term, trunc, _) in enumerate(raw_steps) if term[i] or trunc[i])
        metrics = steps[end].extras["metrics"]
        assert end == raw_end and metrics["episode_length"][i] == raw_steps[end][4]["elapsed_step"][i]
        assert metrics["episode_return"][i] == sum(r[1][i] for r in raw_steps[: end + 1])
        np.testing.assert_array_equal(steps[end].extras["next_obs"][i], raw_steps[end][0][i])  # the obs reached
    raw.close()
    # envpool's arrays are handed on uncopied (new every step, as the comparison above shows), read-only
    assert not steps[0].observation.flags.writeable and not steps[0].extras["next_obs"].flags.writeable
    again = envs.reset(seed=SEEDS)  # the same host env restarts: no second pool
    assert envs.env.live_host_envs() == 1 and again.observation.shape == first.observation.shape
    envs.close()


@pytest.mark.requires_plugin("ale")
def test_ale_through_the_factory_is_stepped_from_python_as_its_compiled_steps():
    """ALE's host loop (its send/recv, no compiled call per step) plays the episodes the compiled path plays for the
    same seeds: every frame, reward and step type over time-limit ends (limit 4) equal to ``Runner``'s."""
    envs = interop.sebulba_factory("ale/Pong-v5", max_episode_steps=4)(N)
    assert envs.env.host_loop() is not None  # what the factory takes
    reference = Runner(envhub.make("ale/Pong-v5", num_envs=N, max_episode_steps=4), 0)
    acts = np.random.default_rng(1).integers(0, 6, (9, N)).astype(np.int32)
    steps = [envs.reset(seed=SEEDS)] + [envs.step(a) for a in acts]
    ref = [reference.reset(SEEDS)] + [reference.step(a) for a in acts]
    for ts, r in zip(steps, ref, strict=True):
        np.testing.assert_array_equal(ts.observation, r.obs)
        np.testing.assert_array_equal(ts.reward, r.reward)
    for ts, r in zip(steps[1:], ref[1:], strict=True):
        np.testing.assert_array_equal(ts.extras["next_obs"], r.final_obs)
        np.testing.assert_array_equal(ts.step_type, np.where(r.truncated, TRUNCATED, MID))
    assert sum(int((ts.step_type == TRUNCATED).sum()) for ts in steps) == 2 * N  # cut at steps 4 and 8
    reference.env.close()
    envs.close()


class Scored(JaxEnvironment):
    """Each step scores 4 points and rewards the clipped score, 1, with the score in ``info["reward"]`` (as envpool's
    Atari with ``reward_clip=True``); episodes of 3 steps."""

    def __init__(self, num_envs: int | None = None):
        box = spaces.Box(-np.inf, np.inf, ())
        super().__init__(observation_space=box, action_space=spaces.Discrete(2), num_envs=num_envs, max_episode_steps=3)

    def _reset_one(self, key: jax.Array) -> tuple[Any, Any]:
        return jnp.float32(0.0), jnp.float32(0.0)

    def _step_one(self, key: jax.Array, x: Any, action: Any) -> JaxStep:
        return JaxStep(state=x + 1, obs=x + 1, reward=jnp.float32(1.0), terminated=False, truncated=False,
                       info={"reward": jnp.float32(4.0)})  # fmt: skip


class ScoredPlugin:
    @hookimpl
    def envhub_register_envs(self, register: Any) -> None:
        register("Scored-v0", Scored)


def test_an_episode_return_counts_the_score_where_the_env_gives_it_beside_a_clipped_reward():
    envhub.register_backend("scored", ScoredPlugin(), replace=True)
    try:
        envs = interop.sebulba_factory("scored/Scored-v0")(N)
        envs.reset(seed=SEEDS)
        last = [envs.step(np.zeros(N, np.int32)) for _ in range(3)][-1]
    finally:
        envhub.unregister_backend("scored")
    metrics = last.extras["metrics"]
    assert metrics["is_terminal_step"].all() and (last.step_type == TRUNCATED).all()
    np.testing.assert_array_equal(metrics["episode_return"], [12.0, 12.0])  # the score, as Stoix's EnvPoolToStoa
    np.testing.assert_array_equal(last.reward, [1.0, 1.0])  # what the learner gets stays the clipped reward


def test_bad_arguments_are_refused_naming_the_fix():
    with pytest.raises(InvalidArgumentError, match=r"^sebulba_factory\(device='tpu:7'\): this install has the "):
        interop.sebulba_factory("gymnax/CartPole-v1", device="tpu:7")
    with pytest.raises(InvalidArgumentError, match=r"^sebulba_factory\(device=3\): "):
        interop.sebulba_factory("gymnax/CartPole-v1", device=3)
    with pytest.raises(InvalidArgumentError, match=r"num_envs=4\): each actor gives num_envs"):
        interop.sebulba_factory("gymnax/CartPole-v1", num_envs=4)
    with pytest.raises(InvalidArgumentError, match=r"the env id must be a string"):
        interop.sebulba_factory(None)
    factory = interop.sebulba_factory("gymnax/CartPole-v1")
    assert factory.device is None  # NumPy out; JAX-native envs step on each call's default device (jax.default_device)
    for bad in (0, None, 2.0, True):
        with pytest.raises(InvalidArgumentError, match=rf"^num_envs={bad!r} for the Sebulba factory: use an int >= 1"):
            factory(bad)


@pytest.mark.parametrize("env_id", IDS)
def test_seeds_of_another_length_options_and_a_step_before_reset_are_refused(env_id):
    envs = interop.sebulba_factory(env_id)(N)  # gymnasium: a host env, stepped by the host loop
    with pytest.raises(
        InvalidArgumentError, match=rf"^step\(\) of the export of '{env_id}' before reset\(\): call reset"
    ):
        envs.step(actions(0))
    with pytest.raises(InvalidArgumentError, match=r"reset\(seed=\[1, 2, 3\]\) .*: 3 seeds for 2 envs; pass one seed"):
        envs.reset(seed=[1, 2, 3])
    with pytest.raises(InvalidArgumentError, match=r"seed=-1 \(in seed=\[1, -1\]\) must be an int"):
        envs.reset(seed=[1, -1])
    with pytest.raises(InvalidArgumentError, match=r"it takes no options"):
        envs.reset(seed=SEEDS, options=[{}, {}])
    envs.close()


@pytest.mark.requires_plugin("jaxmarl")
def test_a_multi_agent_env_is_refused_naming_to_jumanji():
    factory = interop.sebulba_factory("jaxmarl/MPE_simple_spread_v3")
    with pytest.raises(InvalidArgumentError, match=r"^sebulba_factory .*Stoix's Sebulba systems train one agent"):
        factory(N)


def test_without_stoa_the_entry_point_raises_the_install_line(monkeypatch):
    monkeypatch.delitem(sys.modules, "envhub.interop.sebulba", raising=False)
    monkeypatch.delitem(sys.modules, "envhub.interop.stoa_export", raising=False)
    monkeypatch.setitem(sys.modules, "stoa", None)  # not installed
    with pytest.raises(
        MissingDependencyError, match=r"sebulba_factory needs the Python package 'stoa-env'.*envhub\[stoa\]"
    ):
        interop.sebulba_factory("gymnax/CartPole-v1")
