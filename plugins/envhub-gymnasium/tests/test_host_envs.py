"""The host envs people run: Box2D, MuJoCo and Atari through gymnasium, and rendering them."""

from __future__ import annotations

import importlib.util

import jax
import numpy as np
import pytest

import envhub
from envhub import testing
from envhub.plugin import RenderError

KEY = jax.random.key(0)

needs_box2d = pytest.mark.skipif(
    importlib.util.find_spec("Box2D") is None, reason='needs Box2D: pip install "envhub-gymnasium[box2d]"'
)
needs_mujoco = pytest.mark.skipif(
    importlib.util.find_spec("mujoco") is None, reason='needs mujoco: pip install "envhub-gymnasium[mujoco]"'
)
needs_ale = pytest.mark.skipif(
    importlib.util.find_spec("ale_py") is None, reason='needs ale-py: pip install "envhub-gymnasium[atari]"'
)


@needs_box2d
class TestLunarLander(testing.ConformanceTests):
    env_id = "gymnasium/LunarLander-v3"


@needs_mujoco
class TestHalfCheetahBatched(testing.ConformanceTests):
    env_id = "gymnasium/HalfCheetah-v5"
    make_kwargs = {"num_envs": 2}


@needs_mujoco
class TestHopper(testing.ConformanceTests):  # terminates when it falls
    env_id = "gymnasium/Hopper-v5"


@needs_ale
class TestPongRam(testing.ConformanceTests):  # 128 bytes of RAM: the kit's many steps stay cheap
    env_id = "gymnasium/ALE/Pong-v5"
    make_kwargs = {"obs_type": "ram", "frameskip": 1}


# --- rendering: rgb_array frames of the live host env --------------------------------------------


@pytest.mark.skipif(
    importlib.util.find_spec("pygame") is None, reason='needs pygame: pip install "envhub-gymnasium[render]"'
)
def test_classic_control_renders_and_render_mode_none_is_explained():
    with envhub.make("gymnasium/CartPole-v1", num_envs=2) as env:
        state, _ = env.init(KEY)
        frames = env.render(state)
        assert frames.shape == (2, 400, 600, 3) and frames.dtype == np.uint8 and frames.var() > 0
        assert env.render_modes == ("rgb_array",)
    with envhub.make("gymnasium/CartPole-v1", render_mode=None) as env:
        assert env.render_modes == ()
        with pytest.raises(RenderError, match=r"made with render_mode=None, and frames need 'rgb_array'"):
            env.render(env.init(KEY)[0])


@needs_box2d
def test_lunar_lander_renders_and_records(tmp_path):
    iio = pytest.importorskip("imageio.v3", reason="GIF writing needs imageio (envhub[render])")
    with envhub.make("gymnasium/LunarLander-v3") as env:
        state, _ = env.init(KEY)
        frame = env.render(state)
        assert frame.shape == (400, 600, 3) and frame.dtype == np.uint8 and frame.var() > 0
        assert envhub.record(env, envhub.random_policy(env), KEY, 4, tmp_path / "lander.gif") == 5
    assert iio.imread(tmp_path / "lander.gif", index=None).shape == (5, 400, 600, 3)  # it falls every step


@needs_box2d
def test_box2d_envs_make_init_and_step_without_warnings():
    """Box2D's SWIG extension warns, as it is imported, that its types have no __module__ (a DeprecationWarning,
    shown under -W default): the plugin drops those. In a fresh interpreter, where Box2D is not yet imported."""
    import subprocess
    import sys

    code = (
        "import jax, envhub; e = envhub.make('gymnasium/LunarLander-v3'); s, _ = e.init(jax.random.key(0)); "
        "e.step(jax.random.key(1), s, 0)"
    )
    run = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stderr == "", run.stderr


@needs_mujoco
def test_mujoco_renders_off_screen():
    with envhub.make("gymnasium/Hopper-v5", num_envs=2, width=64, height=48) as env:
        state, _ = env.init(KEY)
        frames = env.render(state)
        assert frames.shape == (2, 48, 64, 3) and frames.dtype == np.uint8 and frames.var() > 0


@needs_ale
def test_pong_obs_type_and_frameskip_pass_through_and_it_renders():
    with envhub.make("gymnasium/ALE/Pong-v5", obs_type="grayscale", frameskip=1) as env:
        assert env.single_observation_space.shape == (210, 160)
        state, ts = env.init(KEY)
        assert ts.obs.shape == (210, 160) and ts.obs.dtype == np.uint8
        frame = env.render(state)
        assert frame.shape == (210, 160, 3) and frame.var() > 0
        assert env.metadata["vectorization_mode"] == "sync"  # AtariEnv itself, not ale-py's preprocessing vector env
    with envhub.make("gymnasium/ALE/Pong-v5", obs_type="ram") as env:
        assert env.single_observation_space.shape == (128,)
