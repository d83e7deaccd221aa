"""``to_torchrl``: TorchRL's specs and conventions, ``check_env_specs``, partial resets, seeding, a collector with
TorchRL's PPO loss, and ``env.step``'s errors.

torch is not in the main test venv (its PyPI wheel pulls ~5 GB of CUDA): ``tests/test_sb3_cpu_torch.py`` runs this
module in its side venv (CPU torch, ``envhub[torchrl]``); here only the missing-dependency test runs.
"""

import importlib
import sys

import numpy as np
import pytest

import envhub
from envhub import spaces
from envhub.errors import ActionError, ClosedEnvironmentError, InvalidArgumentError, MissingDependencyError
from envhub.interop import to_torchrl
from envhub.testing.toy_envs import Corridor

try:
    import torch
    import torchrl  # noqa: F401
except ImportError:
    torch = None
needs_torchrl = pytest.mark.skipif(torch is None, reason='needs torch and torchrl: pip install "envhub[torchrl]"')
CARTPOLE = "gymnax/CartPole-v1"


@pytest.fixture(scope="module")
def cartpole():
    return to_torchrl(envhub.make(CARTPOLE, num_envs=4, max_steps_in_episode=30))


@needs_torchrl
@pytest.mark.requires_plugin("gymnax")
def test_specs_follow_torchrl_and_pass_check_env_specs(cartpole):
    from torchrl.data import Bounded, Categorical, OneHot, Unbounded
    from torchrl.envs.utils import check_env_specs

    assert cartpole.batch_size == (4,) and cartpole.device == torch.device("cpu")
    assert isinstance(cartpole.action_spec, Categorical) and cartpole.action_spec.shape == (4,)
    assert cartpole.action_spec.dtype == torch.int64 and cartpole.action_spec.space.n == 2
    assert isinstance(cartpole.observation_spec["observation"], Unbounded)  # +-3.4e38: its span overflows float32
    assert cartpole.reward_spec.shape == (4, 1) and set(cartpole.full_done_spec.keys()) == {
        "done",
        "terminated",
        "truncated",
    }
    check_env_specs(cartpole, seed=0)
    one = to_torchrl(envhub.make("gymnax/Pendulum-v1"), one_hot_actions=True)  # unbatched, a Box action
    assert one.batch_size == () and isinstance(one.action_spec, Bounded) and one.action_spec.shape == (1,)
    check_env_specs(one, seed=0)
    hot = to_torchrl(envhub.make(CARTPOLE, num_envs=2), one_hot_actions=True)
    assert isinstance(hot.action_spec, OneHot) and hot.action_spec.shape == (2, 2)
    check_env_specs(hot, seed=0)


@needs_torchrl
@pytest.mark.requires_plugin("gymnasium")
def test_host_env_passes_check_env_specs():
    from torchrl.envs.utils import check_env_specs

    env = to_torchrl(envhub.make("gymnasium/CartPole-v1", num_envs=3))
    check_env_specs(env, seed=0)
    data = env.rollout(40, break_when_any_done=False)
    assert data["next", "done"].any() and torch.isfinite(data["next", "observation"]).all()
    env.close()  # TorchRL's close (a Collector's, on finishing) leaves the envhub env to its maker
    assert not env.env.closed
    env.env.close()


@needs_torchrl
@pytest.mark.requires_plugin("gymnax")
def test_next_holds_the_observation_reached_and_reset_the_next_episodes_first(cartpole):
    from envhub.interop.compiled import Runner

    reference = Runner(cartpole.env, 7)  # the same key stream: envhub's own TimeSteps
    ts = reference.reset()
    cartpole.set_seed(7)
    pushes = np.array([False, False, True, True])  # envs 2 and 3 always push right and fall: terminated

    def policy(td):
        return td.set("action", torch.as_tensor((td["observation"][:, 2].numpy() > 0) | pushes).long())

    data = cartpole.rollout(70, policy, break_when_any_done=False)
    np.testing.assert_allclose(data["observation"][:, 0].numpy(), ts.obs)
    for t in range(70):
        ts = reference.step(((ts.obs[:, 2] > 0) | pushes).astype(np.int32))
        step = data[:, t]
        np.testing.assert_allclose(step["next", "observation"].numpy(), ts.final_obs)
        assert step["next", "terminated"].squeeze(-1).tolist() == ts.terminated.tolist()
        assert step["next", "truncated"].squeeze(-1).tolist() == ts.truncated.tolist()
        assert step["next", "done"].squeeze(-1).tolist() == (ts.terminated | ts.truncated).tolist()
        if t + 1 < 70:  # after a partial reset, the next episode's first observation: envhub's auto-reset
            np.testing.assert_allclose(data["observation"][:, t + 1].numpy(), ts.obs)
    assert data["next", "truncated"].any() and data["next", "terminated"].any()


@needs_torchrl
@pytest.mark.requires_plugin("gymnax")
def test_partial_reset_of_running_envs_and_seeding(cartpole):
    from tensordict import TensorDict

    cartpole.set_seed(3)
    first = cartpole.reset()
    cartpole.set_seed(3)  # the same starts, whatever ran before
    assert torch.equal(cartpole.reset()["observation"], first["observation"])
    cartpole.set_seed(4)
    assert not torch.equal(cartpole.reset()["observation"], first["observation"])
    td = cartpole.reset()
    for _ in range(3):
        td = cartpole.step_mdp(cartpole.step(td.set("action", torch.ones(4, dtype=torch.long))))
    mask = torch.tensor([[True], [False], [True], [False]])
    again = cartpole.reset(TensorDict({**td.to_dict(), "_reset": mask}, batch_size=[4]))
    assert torch.equal(again["observation"][1], td["observation"][1]) and not again["done"].any()
    assert not torch.equal(again["observation"][0], td["observation"][0])  # a new episode: envhub's reset(where=...)
    assert (again["observation"][[0, 2]].abs() <= 0.05).all()  # CartPole starts within +-0.05


@needs_torchrl
@pytest.mark.requires_plugin("gymnax")
def test_collector_and_torchrl_ppo_loss_train_a_few_iterations(cartpole):
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector  # TorchRL 0.14's name of SyncDataCollector
    from torchrl.modules import ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    torch.manual_seed(0)
    env = cartpole
    logits = TensorDictModule(nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2)), ["observation"], ["logits"])
    actor = ProbabilisticActor(logits, in_keys=["logits"], spec=env.action_spec, return_log_prob=True,
                               distribution_class=torch.distributions.Categorical)  # fmt: skip
    critic = ValueOperator(nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 1)), in_keys=["observation"])
    loss = ClipPPOLoss(actor, critic)
    gae = GAE(gamma=0.99, lmbda=0.95, value_network=critic)
    optim = torch.optim.Adam(loss.parameters(), lr=3e-3)
    collector = Collector(env, actor, frames_per_batch=64, total_frames=256, auto_register_policy_transforms=False)
    iterations = 0
    for data in collector:
        assert data.batch_size == (4, 16)
        with torch.no_grad():
            gae(data)
        losses = loss(data.reshape(-1))
        total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
        assert all(torch.isfinite(v).all() for v in losses.values() if isinstance(v, torch.Tensor))
        optim.zero_grad()
        total.backward()
        optim.step()
        iterations += 1
    assert iterations == 4 and not env.env.closed  # the collector closed the export: the envhub env is open
    assert env.rollout(3).batch_size == (4, 3)


@needs_torchrl
@pytest.mark.requires_plugin("gymnax")
def test_bad_actions_get_env_steps_errors_and_the_env_stays_usable(cartpole):
    from tensordict import TensorDict

    td = cartpole.reset()
    with pytest.raises(ActionError, match=r"Invalid action for 'gymnax/CartPole-v1': .*dtype float32 where integers"):
        cartpole.step(td.set("action", torch.zeros(4)))
    with pytest.raises(ActionError, match=r"5 at index \(1,\) is outside \[0, 2\)"):
        cartpole.step(td.set("action", torch.tensor([0, 5, 0, 1])))
    with pytest.raises(ActionError, match=r"shape \(4, 2\) where \(4,\) is needed"):
        cartpole.step(td.set("action", torch.zeros(4, 2, dtype=torch.long)))
    assert cartpole.step(td.set("action", torch.zeros(4, dtype=torch.long)))["next", "reward"].shape == (4, 1)
    hot = to_torchrl(envhub.make(CARTPOLE, num_envs=2), one_hot_actions=True)  # checked before anything runs
    with pytest.raises(ActionError, match=r"not one-hot"):
        hot.step(TensorDict(action=torch.ones(2, 2, dtype=torch.long), batch_size=[2]))
    with pytest.raises(ActionError, match=r"one-hot shape \(2, 3\) where \(2, 2\) is needed"):
        hot.step(TensorDict(action=torch.zeros(2, 3, dtype=torch.long), batch_size=[2]))


@needs_torchrl
@pytest.mark.requires_plugin("gymnax")
def test_devices_flags_masks_final_obs_and_pickling_follow_the_export_contract(cartpole):
    """``envhub.interop.contract``: each refused with an ``InvalidArgumentError`` naming the value and the fix, the
    export still usable; it pickles as its call (TorchRL's multiprocess collectors pickle their envs)."""
    import pickle

    from tensordict import TensorDict

    base = cartpole.env
    devices = [("gpu", "'gpu'"), (3.5, "3.5"), ("meta", "'meta'")]  # was torch's RuntimeError, or accepted
    devices += (
        [] if torch.cuda.is_available() else [("cuda:0", "'cuda:0'"), (0, "0")]
    )  # was a failure at the first step
    for device, shown in devices:
        with pytest.raises(
            InvalidArgumentError, match=rf"^to_torchrl\(device={shown}\): this install has the devices \["
        ):
            to_torchrl(base, device=device)
    with pytest.raises(InvalidArgumentError, match=r"^to_torchrl\(one_hot_actions='yes'\): give True \(OneHot"):
        to_torchrl(base, one_hot_actions="yes")  # was taken as True
    with pytest.raises(InvalidArgumentError, match=r"^to_torchrl: .* drops final_obs \(DropFinalObs\), but TorchRL"):
        to_torchrl(envhub.wrappers.DropFinalObs(base))  # was refused at the first step only
    cartpole.reset()
    for mask, shown in (
        (torch.ones(4, dtype=torch.long), r"dtype int64, shape \(4,\)"),
        (torch.ones(4, 2, dtype=torch.bool), r"dtype bool, shape \(4, 2\)"),
    ):
        with pytest.raises(
            InvalidArgumentError, match=rf"reset mask .* \({shown}\) must be a bool array of shape \(4,\) or"
        ):
            cartpole.reset(TensorDict({"_reset": mask}, batch_size=[4]))  # was torch's reshape error, or cast
    back = pickle.loads(pickle.dumps(cartpole))  # was: jitted functions cannot be pickled
    assert type(back) is type(cartpole) and back.made.flags == cartpole.made.flags and back.env is not base
    assert back.rollout(3).batch_size == (4, 3) and cartpole.rollout(2).batch_size == (4, 2)


class Wide(Corridor):
    observation_space = spaces.Box(0, 6, (2,), np.uint64)  # torch has no full uint64 tensors


@needs_torchrl
def test_trees_and_refusals():
    from torchrl.data import Composite
    from torchrl.envs.utils import check_env_specs

    from envhub.interop.torchrl_export import to_torchrl_spec

    tree = spaces.Tree(
        {"pos": spaces.Box(0.0, 6.0, (1,)), "t": (spaces.Discrete(21), spaces.Box(False, True, (2,), bool))}
    )
    fn = lambda obs: {"pos": obs[:1], "t": (obs[1].astype(np.int32), obs[:2] > 1)}  # noqa: E731
    env = to_torchrl(envhub.wrappers.TransformObservation(Corridor(), fn, tree))
    assert isinstance(env.observation_spec["t"], Composite) and env.observation_spec["t", "1"].dtype == torch.bool
    check_env_specs(env, seed=0)
    with pytest.raises(InvalidArgumentError, match=r"the observation space of .* Box\(.*uint64.*has no TorchRL spec"):
        to_torchrl(Wide())
    with pytest.raises(InvalidArgumentError, match=r"entry 'reward', a key TorchRL keeps for itself"):
        to_torchrl(
            envhub.wrappers.TransformObservation(
                Corridor(), lambda o: {"reward": o}, spaces.Tree({"reward": Corridor().observation_space})
            )
        )
    assert to_torchrl_spec(spaces.Discrete(3, start=-1)).space.low.item() == -1  # an observation: inclusive bounds
    multi = Corridor()
    multi.agents = ("a", "b")
    with pytest.raises(InvalidArgumentError, match=r"multi-agent.*to_pettingzoo_parallel.*to_jaxmarl"):
        to_torchrl(multi)
    closed = Corridor()
    torchrl_env = to_torchrl(closed)
    torchrl_env.reset()
    closed.close()
    with pytest.raises(ClosedEnvironmentError, match=r"step\(\) called on environment .* after close\(\)"):
        torchrl_env.rand_step()
    with pytest.raises(ClosedEnvironmentError, match=r"reset\(\) called on environment .* after close\(\)"):
        torchrl_env.reset()
    with pytest.raises(ClosedEnvironmentError, match=r"to_torchrl\(\) called on environment .* after close\(\)"):
        to_torchrl(closed)


@needs_torchrl
def test_a_large_narrow_observation_reaches_torch_exact():
    """An image (uint8, more values than ``packing.WIDEN_AT_MOST``) travels beside the packed words: same values."""
    space = spaces.Box(0, 255, (80, 80), np.uint8)
    image = lambda obs: (obs[0] * 40 + np.arange(80 * 80).reshape(80, 80) % 7 + 1).astype(np.uint8)  # noqa: E731
    env = to_torchrl(envhub.wrappers.TransformObservation(Corridor(), image, space))
    data = env.rollout(3)
    positions = data["next", "observation"][:, 0, 0].numpy() - 1  # position * 40 at the corner
    expected = np.stack([image(np.array([p // 40])) for p in positions])
    np.testing.assert_array_equal(data["next", "observation"].numpy(), expected)
    assert data["next", "observation"].dtype == torch.uint8


def test_import_envhub_interop_does_not_import_torch(monkeypatch):
    """In this process (no interpreter to start): ``envhub.interop`` imported afresh with torch unimportable."""
    for name in [m for m in sys.modules if m == "envhub.interop" or m.startswith("envhub.interop.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in ("torch", "torchrl", "tensordict"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it raises ImportError
    monkeypatch.setattr(envhub, "interop", sys.modules.get("envhub.interop"), raising=False)  # put back after
    fresh = importlib.import_module("envhub.interop")
    assert callable(fresh.to_torchrl)


def test_missing_torchrl_raises_the_install_line(monkeypatch):
    monkeypatch.delitem(sys.modules, "envhub.interop.torchrl_export", raising=False)
    monkeypatch.setitem(sys.modules, "torchrl.envs", None)
    with pytest.raises(MissingDependencyError, match=r"needs the Python package 'torchrl'.*envhub\[torchrl\]"):
        envhub.interop.to_torchrl(Corridor())  # looked up again: the function of the module imported afresh
