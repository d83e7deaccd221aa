"""Self-play PPO on a two-player, zero-sum, turn-based envhub game (pgx's connect four by default).

    python examples/selfplay.py [ENV_ID] [--num-envs N] [--total-steps T] [--seed S] --out DIR

One policy plays both sides: on every step the player to move (``obs["current_player"]``) samples from the
policy restricted to its legal moves (``obs["legal_action_mask"]``); pgx's observation is already the board
as the player to move sees it. Each step is the mover's decision, rewarded with what the mover got on it
(``ts.reward[f"player_{mover}"]``: +1 for a winning move). Values are from the mover's side, so the next
state's value counts negated (the opponent moves there): ``target = r + gamma * -V(next)`` unless the game
ended, and advantages flip sign the same way (a zero-sum, alternating-turn GAE).

After training, the final policy plays ``eval_games`` games against a uniformly random legal player, half as
each player id; ``DIR/metrics.json`` has its win, draw and loss rates (``win_rate`` etc.), the same for a random
player against random (the baseline), the settings and the training curve (mean game length), and
``DIR/curve.png``. Needs ``pip install -e ".[examples]"`` (optax, matplotlib) and the pgx plugin (``.[pgx]``).

    python examples/selfplay.py pgx/connect_four --out runs/c4    # the committed run's settings

The committed run: examples/runs/selfplay_connect_four/metrics.json (docs/multi-agent.md quotes it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, str(Path(__file__).resolve().parent))  # examples/ppo.py, run from anywhere
import ppo  # noqa: E402

import envhub  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Config:
    num_envs: int = 256
    num_steps: int = 32  # rollout length per update
    total_steps: int = 6_000_000  # env steps (moves)
    lr: float = 3e-4
    gamma: float = 1.0  # games are short and end in a win, loss or draw
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    epochs: int = 4
    minibatches: int = 4
    hidden: int = 128
    seed: int = 0
    eval_games: int = 1024


def init_params(key: jax.Array, obs_size: int, actions: int, hidden: int) -> dict:
    sizes = [obs_size, hidden, hidden]
    keys = jax.random.split(key, 4)
    dense = lambda k, a, b, s: (jax.nn.initializers.orthogonal(s)(k, (a, b)), jnp.zeros(b))  # noqa: E731
    torso = [dense(keys[i], sizes[i], sizes[i + 1], np.sqrt(2)) for i in range(2)]
    return {"torso": torso, "pi": dense(keys[2], hidden, actions, 0.01), "v": dense(keys[3], hidden, 1, 1.0)}


def policy(params: dict, obs: dict) -> tuple[jax.Array, jax.Array]:
    """Masked logits (illegal moves -inf) and the value, for the player to move."""
    x = obs["observation"].reshape(obs["observation"].shape[0], -1).astype(jnp.float32)
    for w, b in params["torso"]:
        x = jax.nn.relu(x @ w + b)
    logits = x @ params["pi"][0] + params["pi"][1]
    return jnp.where(obs["legal_action_mask"], logits, -1e9), (x @ params["v"][0] + params["v"][1])[:, 0]


def mover_reward(ts: Any, mover: jax.Array, agents: tuple[str, ...]) -> jax.Array:
    return jnp.take_along_axis(jnp.stack([ts.reward[a] for a in agents], 1), mover[:, None], 1)[:, 0]


def build(env: envhub.Environment, cfg: Config) -> tuple[Any, Any, int]:
    n, batch = cfg.num_envs, cfg.num_envs * cfg.num_steps
    num_updates = max(1, cfg.total_steps // batch)
    opt = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(cfg.lr, eps=1e-5))
    actions = env.single_action_space.n
    obs_size = int(np.prod(env.single_observation_space["observation"].shape))

    def start(key: jax.Array) -> tuple:
        param_key, env_key, key = jax.random.split(key, 3)
        params = init_params(param_key, obs_size, actions, cfg.hidden)
        state, ts = env.init(env_key)
        return params, opt.init(params), state, ts.obs, key

    def env_step(params: dict, carry: tuple, key: jax.Array) -> tuple:
        state, obs = carry
        act_key, step_key = jax.random.split(key)
        logits, value = policy(params, obs)
        action = jax.random.categorical(act_key, logits)
        logp = jax.nn.log_softmax(logits)[jnp.arange(n), action]
        state, ts = env.step(step_key, state, action.astype(jnp.int32))
        reward = mover_reward(ts, obs["current_player"], env.agents)
        return (state, ts.obs), (obs, action, logp, value, reward, ts.done)

    def advantages(params: dict, trs: tuple, last_obs: dict) -> tuple[jax.Array, jax.Array]:
        obs, _, _, value, reward, done = trs
        next_value = jnp.concatenate([value[1:], policy(params, last_obs)[1][None]])
        # the next state belongs to the opponent: its value from our side is negated; a finished game has none
        delta = reward - cfg.gamma * (1.0 - done) * next_value - value

        def back(gae: jax.Array, x: tuple) -> tuple:
            d, dn = x
            gae = d - cfg.gamma * cfg.gae_lambda * (1.0 - dn) * gae
            return gae, gae

        _, adv = jax.lax.scan(back, jnp.zeros(n), (delta, done), reverse=True)
        return adv, adv + value

    def loss(params: dict, mb: tuple) -> tuple:
        (obs, action, logp, value, _, _), adv, target = mb
        logits, new_value = policy(params, obs)
        log_probs = jax.nn.log_softmax(logits)
        ratio = jnp.exp(jnp.take_along_axis(log_probs, action[:, None], 1)[:, 0] - logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv).mean()
        vf = 0.5 * ((new_value - target) ** 2).mean()
        ent = -(jnp.where(obs["legal_action_mask"], jnp.exp(log_probs) * log_probs, 0.0)).sum(-1).mean()
        return pg + cfg.vf_coef * vf - cfg.ent_coef * ent, jnp.stack([pg, vf, ent])

    epoch = ppo.minibatch_epoch(opt, loss, batch, cfg.minibatches)

    def update(carry: tuple, _: None) -> tuple:
        params, opt_state, state, obs, key = carry
        key, rollout_key, epoch_key = jax.random.split(key, 3)
        (state, obs), trs = jax.lax.scan(
            lambda c, k: env_step(params, c, k), (state, obs), jax.random.split(rollout_key, cfg.num_steps)
        )
        adv, target = advantages(params, trs, obs)
        (params, opt_state), stats = jax.lax.scan(
            lambda s, k: epoch(s, k, (trs, adv, target)), (params, opt_state), jax.random.split(epoch_key, cfg.epochs)
        )
        return (params, opt_state, state, obs, key), {"games": trs[5].sum(), "loss": stats.mean((0, 1))}

    return start, lambda carry, length: jax.lax.scan(update, carry, None, length=length), num_updates


def play_vs_random(env: envhub.Environment, params: dict | None, key: jax.Array, steps: int) -> jax.Array:
    """Each game's first result for the learner (player id ``i % 2`` in game ``i``): +1 win, 0 draw, -1 loss
    (NaN: unfinished). ``params`` None: a random player takes the learner's seat (the baseline)."""
    n = env.num_envs
    seat = jnp.arange(n) % 2

    def body(carry: tuple, key: jax.Array) -> tuple:
        state, obs, result = carry
        k1, k2, k3 = jax.random.split(key, 3)
        uniform = jnp.where(obs["legal_action_mask"], 0.0, -1e9)
        learner = uniform if params is None else policy(params, obs)[0]
        mine = obs["current_player"] == seat
        action = jnp.where(mine, jax.random.categorical(k1, learner), jax.random.categorical(k2, uniform))
        state, ts = env.step(k3, state, action.astype(jnp.int32))
        rewards = jnp.stack([ts.reward[a] for a in env.agents], 1)
        mine_reward = jnp.take_along_axis(rewards, seat[:, None], 1)[:, 0]
        result = jnp.where(jnp.isnan(result) & ts.done, jnp.sign(mine_reward), result)
        return (state, ts.obs, result), None

    init_key, key = jax.random.split(key)
    state, ts = env.init(init_key)
    (_, _, result), _ = jax.lax.scan(body, (state, ts.obs, jnp.full(n, jnp.nan)), jax.random.split(key, steps))
    return result


def rates(result: np.ndarray) -> dict[str, float]:
    done = result[~np.isnan(result)]
    return {
        "win_rate": float((done > 0).mean()),
        "draw_rate": float((done == 0).mean()),
        "loss_rate": float((done < 0).mean()),
    }


def train(env_id: str, cfg: Config, log: Any = print) -> dict[str, Any]:
    with envhub.make(env_id, num_envs=cfg.num_envs) as env:
        if len(env.agents) != 2 or "legal_action_mask" not in env.single_observation_space.spaces:
            raise envhub.errors.InvalidArgumentError(
                f"examples/selfplay.py needs a two-player turn-based game; {env_id!r} is not."
            )
        start, chunk, num_updates = build(env, cfg)
        per_chunk = max(1, num_updates // 20)
        t0 = time.perf_counter()
        carry = jax.jit(start)(jax.random.key(cfg.seed))
        compiled = jax.jit(chunk, static_argnums=1, donate_argnums=0).lower(carry, per_chunk).compile()
        compile_s, train_s, steps, curve = time.perf_counter() - t0, 0.0, 0, []
        for _ in range(num_updates // per_chunk):
            t = time.perf_counter()
            carry, out = compiled(carry)
            games = float(jax.device_get(out["games"]).sum())
            train_s += time.perf_counter() - t
            steps += per_chunk * cfg.num_envs * cfg.num_steps
            curve.append(
                {"env_steps": steps, "mean_game_length": per_chunk * cfg.num_envs * cfg.num_steps / max(games, 1.0)}
            )
            log(
                f"moves {steps:>10,}  mean game length {curve[-1]['mean_game_length']:5.1f}  {steps / train_s:,.0f} moves/s"
            )
    with envhub.make(env_id, num_envs=cfg.eval_games) as eval_env:
        key = jax.random.fold_in(jax.random.key(cfg.seed), 1)
        steps_cap = 200
        learned = np.asarray(jax.jit(lambda p, k: play_vs_random(eval_env, p, k, steps_cap))(carry[0], key))
        baseline = np.asarray(jax.jit(lambda k: play_vs_random(eval_env, None, k, steps_cap))(key))
    metrics = {"env_id": env_id, "seed": cfg.seed, **rates(learned), "eval_games": cfg.eval_games}
    metrics |= {"eval_unfinished": int(np.isnan(learned).sum()), "random_vs_random": rates(baseline)}
    log(f"final policy vs random: {rates(learned)}; random vs random: {rates(baseline)}")
    metrics |= {"total_env_steps": steps, "train_seconds": train_s, "moves_per_second": steps / train_s}
    return metrics | {"compile_seconds": compile_s, "config": dataclasses.asdict(cfg), "curve": curve}


def plot(metrics: dict, path: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    ax.plot([p["env_steps"] for p in metrics["curve"]], [p["mean_game_length"] for p in metrics["curve"]])
    title = f"self-play PPO on {metrics['env_id']}: {metrics['win_rate']:.0%} wins vs random"
    ax.set(xlabel="moves (env steps)", ylabel="mean game length (moves)", title=title)
    fig.savefig(path, dpi=100, bbox_inches="tight")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("env_id", nargs="?", default="pgx/connect_four")
    parser.add_argument("--out", required=True, type=Path, help="folder for metrics.json and curve.png")
    parser.add_argument("--no-plot", action="store_true", help="skip curve.png")
    for f in dataclasses.fields(Config):
        parser.add_argument("--" + f.name.replace("_", "-"), default=f.default, type=type(f.default))
    args = parser.parse_args(argv)
    cfg = Config(**{f.name: getattr(args, f.name) for f in dataclasses.fields(Config)})
    metrics = train(args.env_id, cfg)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    if not args.no_plot:
        plot(metrics, args.out / "curve.png")
    print(
        f"wins {metrics['win_rate']:.1%} vs random (random vs random {metrics['random_vs_random']['win_rate']:.1%}); wrote {args.out}/"
    )
    return metrics


if __name__ == "__main__":
    main()
