"""``register_gymnasium``: envhub ids under gymnasium's own ``make``/``make_vec`` and ``check_env``."""

import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

from envhub import interop

pytestmark = pytest.mark.requires_plugin("gymnax")


@pytest.fixture(scope="module")
def registered():
    ids = interop.register_gymnasium(["gymnax"])
    yield ids
    for gid in ids:
        gymnasium.registry.pop(gid, None)


def test_every_gymnax_id_is_registered_with_a_spec(registered):
    assert "envhub/gymnax-CartPole-v1" in registered and len(registered) > 10
    spec = gymnasium.spec("envhub/gymnax-CartPole-v1")
    assert spec.namespace == "envhub" and spec.name == "gymnax-CartPole" and spec.version == 1
    assert spec.kwargs == {"envhub_id": "gymnax/CartPole-v1"}
    assert gymnasium.envs.registration.load_env_creator(spec.entry_point).metadata["render_modes"] == ["rgb_array"]


def test_registration_builds_no_env():
    code = (
        "import sys, envhub.interop as i; n = len(i.register_gymnasium(['gymnax']));"
        "print(n, 'envhub.interop.gym_env' in sys.modules, 'envhub_gymnax.environment' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    # no export and no backend env class loaded (gymnax's id listing imports gymnax, which starts JAX)
    assert int(out[0]) > 10 and out[1:] == ["False", "False"]


def test_gymnasium_make_passes_check_env(registered):
    env = gymnasium.make("envhub/gymnax-CartPole-v1", max_steps_in_episode=20)
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    with pytest.raises(ValueError, match="render_mode='ansi'"):
        gymnasium.make("envhub/gymnax-Pendulum-v1", render_mode="ansi")


def test_make_vec_gives_the_vector_export(registered):
    venv = gymnasium.make_vec("envhub/gymnax-CartPole-v1", num_envs=3)
    assert venv.num_envs == 3 and venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, _ = venv.reset(seed=0)
    obs, reward, *_ = venv.step(np.array([0, 1, 0]))
    assert obs.shape == (3, 4) and reward.shape == (3,)
    same = gymnasium.make_vec("envhub/gymnax-CartPole-v1", num_envs=2, autoreset_mode=AutoresetMode.SAME_STEP)
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
