"""The vector export in each gymnasium autoreset mode, under every wrapper of ``gymnasium.wrappers.vector``."""

import gymnasium
import gymnasium.wrappers as gw
import gymnasium.wrappers.vector as gwv
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import envhub
from envhub import interop

pytestmark = pytest.mark.requires_plugin("gymnax")
MODES = list(AutoresetMode)


def make_vector(mode, n=3, steps=3):
    env = envhub.make("gymnax/Pendulum-v1", num_envs=n, max_steps_in_episode=steps)
    return interop.to_gymnasium_vector(env, autoreset_mode=mode)


def test_next_step_is_the_default_and_resets_on_the_step_after_the_end():
    venv = make_vector("NextStep")
    assert interop.to_gymnasium_vector(envhub.make("gymnax/Pendulum-v1", num_envs=2)).metadata["autoreset_mode"] == (
        AutoresetMode.NEXT_STEP
    )
    obs, _ = venv.reset(seed=0)
    assert obs.flags.writeable
    for _ in range(3):
        obs, reward, terminated, truncated, info = venv.step(np.ones((3, 1), np.float32))
    assert truncated.all() and "final_obs" not in info
    ended = obs.copy()
    obs, reward, terminated, truncated, _ = venv.step(np.ones((3, 1), np.float32))
    assert (reward == 0).all() and not truncated.any() and not terminated.any()
    assert not np.allclose(obs, ended) and venv.observation_space.contains(obs)
    obs[:] = 0  # writable; the export keeps its own copy
    for _ in range(3):
        _, reward, _, truncated, _ = venv.step(np.ones((3, 1), np.float32))
    assert truncated.all() and (reward != 0).all()  # a whole episode of 3 real steps after the restart


def test_disabled_resets_only_the_masked_envs():
    venv = make_vector(AutoresetMode.DISABLED)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.DISABLED
    venv.reset(seed=0)
    for _ in range(3):
        obs, _, _, truncated, _ = venv.step(np.zeros((3, 1), np.float32))
    assert truncated.all()
    mask = np.array([True, False, True])
    new, _ = venv.reset(options={"reset_mask": mask})
    np.testing.assert_array_equal(new[1], obs[1])
    assert not np.allclose(new[[0, 2]], obs[[0, 2]]) and new.flags.writeable
    with pytest.raises(
        ValueError, match=r"reset mask array\(\[ True, True\]\) \(dtype bool, shape \(2,\)\) must be a bool"
    ):
        venv.reset(options={"reset_mask": np.ones(2, bool)})
    with pytest.raises(ValueError, match="needs autoreset_mode=AutoresetMode.DISABLED"):
        make_vector("SameStep").reset(options={"reset_mask": mask})


def test_same_step_reports_final_obs():
    venv = make_vector(AutoresetMode.SAME_STEP)
    venv.reset(seed=0)
    for _ in range(3):
        obs, _, _, truncated, info = venv.step(np.zeros((3, 1), np.float32))
    assert truncated.all() and info["_final_obs"].all() and info["_final_info"].all()
    assert not np.allclose(np.stack(info["final_obs"]), obs)


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="autoreset_mode='Later' is not a gymnasium autoreset mode"):
        make_vector("Later")


def _wrappers(tmp_path):
    """Each wrapper of gymnasium.wrappers.vector: a constructor, or the reason it cannot run here."""
    return {
        "VectorizeTransformObservation": lambda e: gwv.VectorizeTransformObservation(
            e, gw.DtypeObservation, dtype=np.float64
        ),
        "VectorizeTransformAction": lambda e: gwv.VectorizeTransformAction(e, gw.ClipAction),
        "VectorizeTransformReward": lambda e: gwv.VectorizeTransformReward(
            e, gw.ClipReward, min_reward=-1, max_reward=1
        ),
        "DictInfoToList": gwv.DictInfoToList,
        "TransformObservation": lambda e: gwv.TransformObservation(e, lambda o: o / 2),
        "FilterObservation": "needs Dict observations (Pendulum's is a Box)",
        "FlattenObservation": gwv.FlattenObservation,
        "GrayscaleObservation": "needs RGB image observations",
        "ResizeObservation": "needs image observations",
        "ReshapeObservation": lambda e: gwv.ReshapeObservation(e, (3, 1)),
        "RescaleObservation": lambda e: gwv.RescaleObservation(e, -1.0, 1.0),
        "DtypeObservation": lambda e: gwv.DtypeObservation(e, np.float64),
        "NormalizeObservation": gwv.NormalizeObservation,
        "TransformAction": lambda e: gwv.TransformAction(e, lambda a: np.clip(a, -1, 1)),
        "ClipAction": gwv.ClipAction,
        "RescaleAction": lambda e: gwv.RescaleAction(e, -1.0, 1.0),
        "TransformReward": lambda e: gwv.TransformReward(e, lambda r: r / 16),
        "ClipReward": lambda e: gwv.ClipReward(e, -1.0, 1.0),
        "NormalizeReward": gwv.NormalizeReward,
        "RecordEpisodeStatistics": gwv.RecordEpisodeStatistics,
        "RecordVideo": "needs moviepy and a render_mode='rgb_array' vector env (none is drawn here)",
        "HumanRendering": "opens a window (pygame display)",
        "ArrayConversion": "converts between array libraries (array-api-compat); the export speaks NumPy",
        "JaxToNumpy": "converts a JAX-speaking env to NumPy; the export already speaks NumPy",
        "JaxToTorch": "needs torch, and a JAX-speaking env",
        "NumpyToTorch": "needs torch",
    }


def refused(name, mode):
    """Why gymnasium's wrapper ``name`` itself refuses ``mode`` (it asserts on metadata["autoreset_mode"]), or None."""
    if name == "NormalizeObservation" and mode != AutoresetMode.NEXT_STEP:
        return "gymnasium's vector NormalizeObservation supports NEXT_STEP only"
    observation_wrapper = issubclass(getattr(gwv, name), gymnasium.vector.VectorObservationWrapper)
    if observation_wrapper and mode == AutoresetMode.SAME_STEP:
        return f"gymnasium's {name} is a VectorObservationWrapper, which supports NEXT_STEP and DISABLED only"
    return None


@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
@pytest.mark.parametrize("name", gwv.__all__)
def test_every_gymnasium_vector_wrapper_steps(name, mode, tmp_path):
    make = _wrappers(tmp_path).get(name, f"{name} is new in gymnasium {gymnasium.__version__}: add it here")
    if isinstance(make, str):
        pytest.skip(make)
    if refused(name, mode):
        with pytest.raises(AssertionError):
            make(make_vector(mode))
        pytest.skip(refused(name, mode))
    venv = make(make_vector(mode))
    obs, _ = venv.reset(seed=0)
    ends = 0
    for _ in range(7):
        obs, reward, terminated, truncated, info = venv.step(venv.action_space.sample())
        assert venv.observation_space.contains(np.asarray(obs, venv.observation_space.dtype))
        assert np.shape(reward) == (3,) and np.asarray(reward).flags.writeable
        ends += int(np.sum(np.logical_or(terminated, truncated)))
        if mode == AutoresetMode.DISABLED and np.any(np.logical_or(terminated, truncated)):
            venv.reset(options={"reset_mask": np.logical_or(terminated, truncated)})
    assert ends >= 3  # episodes of 3 steps ended and restarted through the wrapper
    venv.close()


@pytest.mark.requires_plugin("gymnasium")
@pytest.mark.parametrize("mode", MODES, ids=[m.name for m in MODES])
def test_host_env_speaks_every_mode(mode):
    env = envhub.make("gymnasium/CartPole-v1", num_envs=2, max_episode_steps=2)
    venv = interop.to_gymnasium_vector(env, autoreset_mode=mode)
    venv.reset(seed=0)
    rewards, ends = [], []
    for _ in range(3):
        obs, reward, terminated, truncated, info = venv.step(np.array([0, 1]))
        rewards.append(reward.tolist())
        ends.append((terminated | truncated).tolist())
        if mode == AutoresetMode.DISABLED and ends[-1][0]:
            obs, _ = venv.reset(options={"reset_mask": terminated | truncated})
        assert venv.observation_space.contains(obs)
    assert ends[:2] == [[False, False], [True, True]]
    assert rewards[2] == ([0.0, 0.0] if mode == AutoresetMode.NEXT_STEP else [1.0, 1.0])
