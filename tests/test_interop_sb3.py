"""``to_sb3_vec_env``: SB3's VecEnv conventions, and PPO training a few steps on it (skipped without SB3)."""

import numpy as np
import pytest

import envhub

sb3 = pytest.importorskip("stable_baselines3", reason='needs stable-baselines3: pip install "envhub[sb3]"')
pytestmark = pytest.mark.requires_plugin("gymnax")


def make(n=3, steps=3):
    from envhub.interop.sb3 import to_sb3_vec_env

    return to_sb3_vec_env(envhub.make("gymnax/Pendulum-v1", num_envs=n, max_steps_in_episode=steps))


def test_vec_env_follows_sb3_conventions():
    venv = make()
    venv.seed(5)
    obs = venv.reset()
    assert obs.shape == (3, 3) and obs.flags.writeable and len(venv.reset_infos) == 3
    np.testing.assert_array_equal(make_and_reset(5), obs)  # the seed decides the first observations
    for _ in range(3):
        venv.step_async(np.zeros((3, 1), np.float32))
        obs, rewards, dones, infos = venv.step_wait()
    assert dones.all() and rewards.dtype == np.float32 and isinstance(infos, list)
    for i, info in enumerate(infos):
        assert info["TimeLimit.truncated"] is True
        assert info["terminal_observation"].shape == (3,)
        assert not np.allclose(info["terminal_observation"], obs[i])  # obs is the next episode's first
    assert venv.env_is_wrapped(envhub.wrappers.TimeLimit) == [False] * 3
    assert venv.get_attr("id") == ["gymnax/Pendulum-v1"] * 3


def make_and_reset(seed):
    venv = make()
    venv.seed(seed)
    return venv.reset()


def test_ppo_learns_a_few_steps_and_vec_wrappers_apply(tmp_path, monkeypatch):
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path))  # SB3's logger makes a folder per model, else in /tmp
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    venv = VecNormalize(VecMonitor(make(n=4, steps=16)))
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, device="cpu", seed=0)
    model.learn(total_timesteps=128)
    assert model.num_timesteps == 128
    assert venv.venv.episode_count >= 4  # VecMonitor counted the 16-step episodes through our dones
