"""TorchRL's own PPO (``Collector``, ``GAE``, ``ClipPPOLoss``) learning CartPole on ``envhub.interop.to_torchrl``.

Everything but the env is TorchRL's, as in its PPO tutorial: ``to_torchrl(envhub.make("gymnax/CartPole-v1",
num_envs=16))`` under TorchRL's ``RewardSum`` transform, a ``Collector`` (TorchRL 0.14's ``SyncDataCollector``) of
2048 frames a batch, ``GAE(0.99, 0.95)``, ``ClipPPOLoss`` (clip 0.2, entropy 0.01), 4 epochs of minibatches of 256,
Adam with a linearly decaying learning rate. Printed per batch: frames, the mean return of the episodes that ended
in it, losses; every ``--eval-every`` batches a greedy evaluation (the mode of the policy, 16 envs, 500 steps: each
env's first episode; 500 is CartPole-v1's best). Stops at a greedy mean >= ``--target`` or at ``--frames``.

    python benchmarks/torchrl_ppo.py [--frames 400000] [--target 475] [--seed 0] [--json benchmarks/results/torchrl_ppo.json]
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import time

import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import RewardSum, TransformedEnv
from torchrl.envs.utils import ExplorationType, set_exploration_type
from torchrl.modules import ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import envhub
from envhub.interop import to_torchrl

ENV, NUM_ENVS, BATCH, EPOCHS, MINIBATCH = "gymnax/CartPole-v1", 16, 2048, 4, 256


def make_env(seed: int) -> TransformedEnv:
    env = TransformedEnv(to_torchrl(envhub.make(ENV, num_envs=NUM_ENVS), seed=seed), RewardSum())
    return env


def mlp(out: int) -> nn.Module:
    return nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, out))


def greedy_returns(env: TransformedEnv, actor: ProbabilisticActor) -> torch.Tensor:
    """Each env's first episode return under the policy's mode (500 steps: CartPole-v1's time limit)."""
    with torch.no_grad(), set_exploration_type(ExplorationType.DETERMINISTIC):
        data = env.rollout(500, actor, break_when_any_done=False)
    done = data["next", "done"].squeeze(-1)  # (envs, steps)
    first = torch.where(done.any(1), done.float().argmax(1), torch.full((NUM_ENVS,), 499))
    return data["next", "episode_reward"].squeeze(-1)[torch.arange(NUM_ENVS), first]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=400_000)
    parser.add_argument("--target", type=float, default=475.0)
    parser.add_argument("--eval-every", type=int, default=5, help="batches between greedy evaluations")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=2.5e-3)
    parser.add_argument("--json", default=None, metavar="PATH")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    env, eval_env = make_env(args.seed), make_env(args.seed + 1000)
    logits = TensorDictModule(mlp(2), ["observation"], ["logits"])
    actor = ProbabilisticActor(
        logits, in_keys=["logits"], spec=env.action_spec, distribution_class=torch.distributions.Categorical,
        return_log_prob=True,
    )  # fmt: skip
    critic = ValueOperator(mlp(1), in_keys=["observation"])
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, critic_coeff=0.5, normalize_advantage=True)
    gae = GAE(gamma=0.99, lmbda=0.95, value_network=critic, average_gae=False)
    optim = torch.optim.Adam(loss.parameters(), lr=args.lr)
    batches = args.frames // BATCH
    schedule = torch.optim.lr_scheduler.LambdaLR(optim, lambda i: 1 - i / (batches * EPOCHS * BATCH // MINIBATCH))
    collector = Collector(env, actor, frames_per_batch=BATCH, total_frames=batches * BATCH)
    curve, evals, start, frames = [], [], time.perf_counter(), 0
    for i, data in enumerate(collector):
        frames += data.numel()
        with torch.no_grad():
            gae(data)
        flat = data.reshape(-1)
        for _ in range(EPOCHS):
            for index in torch.randperm(flat.numel()).split(MINIBATCH):
                losses = loss(flat[index])
                total = losses["loss_objective"] + losses["loss_critic"] + losses["loss_entropy"]
                optim.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optim.step()
                schedule.step()
        collector.update_policy_weights_()
        done = data["next", "done"]
        ended = data["next", "episode_reward"][done]
        mean = float(ended.mean()) if ended.numel() else float("nan")
        seconds = time.perf_counter() - start
        curve.append({"frames": frames, "seconds": round(seconds, 1), "mean_episode_return": round(mean, 1)})
        line = f"batch {i + 1:3d}  frames {frames:7d}  {seconds:6.1f}s  return {mean:6.1f}  loss {float(total.detach()):.3f}"
        if (i + 1) % args.eval_every == 0:
            greedy = float(greedy_returns(eval_env, actor).mean())
            evals.append({"frames": frames, "seconds": round(seconds, 1), "greedy_mean_return": round(greedy, 1)})
            line += f"  greedy {greedy:6.1f}"
            if greedy >= args.target:
                print(line)
                break
        print(line, flush=True)
    collector.shutdown()
    best = max((e["greedy_mean_return"] for e in evals), default=float("nan"))
    print(f"greedy mean return {best} (target >= {args.target}) after {frames} frames, {seconds:.0f} s")
    if args.json:
        versions = {p: importlib.metadata.version(p) for p in ("torch", "torchrl", "jax", "gymnax")}
        result = {
            "env": f"to_torchrl(envhub.make({ENV!r}, num_envs={NUM_ENVS}))", "versions": versions, "seed": args.seed,
            "frames": frames, "seconds": round(seconds, 1), "best_greedy_mean_return": best, "target": args.target,
            "reached": best >= args.target, "evals": evals, "curve": curve,
        }  # fmt: skip
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
