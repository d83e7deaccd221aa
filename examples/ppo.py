"""PPO on any envhub environment: one file, JAX + optax, rollout and update inside one ``lax.scan``.

    python examples/ppo.py ENV_ID [--num-envs N] [--total-steps T] [--seed S] --out DIR [hyper-parameters]

Discrete actions: a categorical policy; float ``Box`` actions: a Gaussian (state-free log-std,
clipped to the space). Each update collects ``num_envs x num_steps`` transitions and runs
``epochs x minibatches`` Adam steps; a jitted chunk of updates is one ``lax.scan``, and Python
prints progress between chunks. A truncated episode bootstraps from V(``ts.final_obs``), the
observation really reached; a terminated one does not. Host backends (``gymnasium/...``) run the
same program, their step a host callback inside the scan.

After training, the final policy plays ``eval_episodes`` whole episodes (one per env of a fresh
batch, from its reset to its first end, actions sampled as in training, with a key of its own).
Writes ``DIR/metrics.json``: ``final_return`` (their mean return; ``final_return_std``),
``train_return_last_10pct`` (mean return of the episodes that ended in the last 10 % of the updates),
``steps_per_second`` (training only: no compilation, no evaluation), the settings and the learning
curve; and ``DIR/curve.png``. Needs ``pip install -e ".[examples]"`` (optax, matplotlib).

    python examples/ppo.py gymnax/CartPole-v1 --out runs/cartpole      # the defaults
    python examples/ppo.py gymnasium/CartPole-v1 --out runs/gym        # gymnasium's env through the bridge
    python examples/ppo.py brax/inverted_pendulum --num-envs 32 --num-steps 64 --total-steps 500000 \\
        --lr 1e-3 --ent-coef 0 --out runs/pendulum

What they reach, per seed, is in benchmarks/results/ppo/runs.json (``python benchmarks/ppo_curves.py``).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import json
import math
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

import envhub
from envhub import spaces


@dataclasses.dataclass(frozen=True)
class Config:
    num_envs: int = 8
    num_steps: int = 128  # rollout length per update
    total_steps: int = 1_000_000
    lr: float = 2.5e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    epochs: int = 4
    minibatches: int = 4
    hidden: int = 64
    seed: int = 0
    eval_episodes: int = 128  # final_return: the final policy's mean return over this many episodes


class EnvLayer(NamedTuple):  # what PPO needs of an env; ts: obs, reward, terminated, truncated, final_obs
    init: Callable[[jax.Array], Any]  # key -> (state, ts)
    step: Callable[[jax.Array, Any, jax.Array], Any]  # (key, state, action) -> (state, ts)
    action_space: spaces.Space  # of one environment


def envhub_layer(env: envhub.Environment) -> EnvLayer:
    return EnvLayer(env.init, env.step, env.single_action_space)


def _mlp_init(key: jax.Array, sizes: list[int], last_scale: float) -> list[tuple[jax.Array, jax.Array]]:
    keys = jax.random.split(key, len(sizes) - 1)
    scales = [math.sqrt(2)] * (len(sizes) - 2) + [last_scale]
    return [
        (jax.nn.initializers.orthogonal(s)(k, (a, b), jnp.float32), jnp.zeros(b))
        for k, a, b, s in zip(keys, sizes[:-1], sizes[1:], scales)
    ]


def _mlp(layers: list[tuple[jax.Array, jax.Array]], x: jax.Array) -> jax.Array:
    for w, b in layers[:-1]:
        x = jnp.tanh(x @ w + b)
    return x @ layers[-1][0] + layers[-1][1]


def policy(params: dict, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(actor output, value)`` for a batch of flat observations."""
    return _mlp(params["actor"], x), _mlp(params["critic"], x)[..., 0]


class Head(NamedTuple):
    """The action distribution for one action space: categorical (Discrete) or Gaussian (float Box)."""

    space: spaces.Space
    discrete: bool
    size: int  # logits, or Gaussian means

    def sample(self, out: jax.Array, log_std: jax.Array, key: jax.Array) -> jax.Array:
        if self.discrete:
            return jax.random.categorical(key, out)
        return out + jnp.exp(log_std) * jax.random.normal(key, out.shape)

    def log_prob(self, out: jax.Array, log_std: jax.Array, raw: jax.Array) -> jax.Array:
        if self.discrete:
            return jnp.take_along_axis(jax.nn.log_softmax(out), raw[..., None], -1)[..., 0]
        return jnp.sum(-0.5 * ((raw - out) / jnp.exp(log_std)) ** 2 - log_std - 0.5 * math.log(2 * math.pi), -1)

    def entropy(self, out: jax.Array, log_std: jax.Array) -> jax.Array:
        if self.discrete:
            return -jnp.sum(jax.nn.softmax(out) * jax.nn.log_softmax(out), -1)
        return jnp.sum(log_std + 0.5 * math.log(2 * math.pi * math.e)) * jnp.ones(out.shape[:-1])

    def to_env(self, raw: jax.Array) -> jax.Array:
        """The sampled value as an action of the space (shifted by ``start``, or clipped to the bounds)."""
        if self.discrete:
            return (raw + self.space.start_value).astype(self.space.dtype)
        clipped = jnp.clip(raw, self.space.low.ravel(), self.space.high.ravel())
        return clipped.reshape(raw.shape[:-1] + self.space.shape).astype(self.space.dtype)


def head_for(space: spaces.Space) -> Head:
    if isinstance(space, spaces.Discrete) or (isinstance(space, spaces.Box) and space.dtype.kind == "f"):
        discrete = isinstance(space, spaces.Discrete)
        return Head(space, discrete, space.n if discrete else int(np.prod(space.shape)))
    raise envhub.errors.InvalidArgumentError(
        f"examples/ppo.py handles Discrete and float Box action spaces, not {space!r}; wrap the env to give it one."
    )


def flat_obs(obs: Any, batch: int) -> jax.Array:
    """Every observation leaf flattened and concatenated: ``(batch, features)`` float32."""
    return jnp.concatenate([jnp.reshape(x, (batch, -1)).astype(jnp.float32) for x in jax.tree.leaves(obs)], -1)


Transition = collections.namedtuple("Transition", "obs raw logp value reward terminated truncated final_obs")


def minibatch_epoch(opt: Any, loss: Callable, batch: int, minibatches: int) -> Callable:
    """``epoch(state, key, data) -> (state, stats)``: one pass of ``opt`` steps on ``loss(params, minibatch)``
    (returning ``(loss, stats)``) over ``data``, whose leaves lead with (time, env) and are shuffled into
    ``minibatches`` minibatches; ``state`` is ``(params, opt_state)``."""

    def sgd_step(state: tuple, mb: tuple) -> tuple:
        params, opt_state = state
        grads, stats = jax.grad(loss, has_aux=True)(params, mb)
        updates, opt_state = opt.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), stats

    def epoch(state: tuple, key: jax.Array, data: tuple) -> tuple:
        perm = jax.random.permutation(key, batch)
        shuffled = jax.tree.map(lambda a: a.reshape((batch, *a.shape[2:]))[perm], data)
        mbs = jax.tree.map(lambda a: a.reshape((minibatches, -1, *a.shape[1:])), shuffled)
        return jax.lax.scan(sgd_step, state, mbs)

    return epoch


def build(layer: EnvLayer, cfg: Config, obs_size: int) -> tuple[Callable, Callable, int]:
    """``(start(key) -> carry, chunk(carry, n) -> (carry, per-update stats), num_updates)``."""
    head, n, batch = head_for(layer.action_space), cfg.num_envs, cfg.num_envs * cfg.num_steps
    num_updates = max(1, cfg.total_steps // batch)
    lr = optax.linear_schedule(cfg.lr, 0.0, num_updates * cfg.epochs * cfg.minibatches) if cfg.anneal_lr else cfg.lr
    opt = optax.chain(optax.clip_by_global_norm(cfg.max_grad_norm), optax.adam(lr, eps=1e-5))

    def start(key: jax.Array) -> tuple:
        actor_key, critic_key, env_key, key = jax.random.split(key, 4)
        params = {
            "actor": _mlp_init(actor_key, [obs_size, cfg.hidden, cfg.hidden, head.size], 0.01),
            "critic": _mlp_init(critic_key, [obs_size, cfg.hidden, cfg.hidden, 1], 1.0),
            "log_std": jnp.zeros(head.size),
        }
        env_state, ts = layer.init(env_key)
        return params, opt.init(params), env_state, flat_obs(ts.obs, n), jnp.zeros(n), key

    def env_step(params: dict, carry: tuple, key: jax.Array) -> tuple:
        env_state, x, ep_return = carry
        act_key, env_key = jax.random.split(key)
        out, value = policy(params, x)
        raw = head.sample(out, params["log_std"], act_key)
        env_state, ts = layer.step(env_key, env_state, head.to_env(raw))
        ep_return = ep_return + ts.reward
        done = ts.terminated | ts.truncated
        finished = jnp.stack([jnp.sum(jnp.where(done, ep_return, 0.0)), jnp.sum(done)])
        trunc = ts.truncated & ~ts.terminated
        tr = Transition(x, raw, head.log_prob(out, params["log_std"], raw), value, ts.reward, ts.terminated, trunc,
                        flat_obs(ts.final_obs, n))  # fmt: skip
        return (env_state, flat_obs(ts.obs, n), jnp.where(done, 0.0, ep_return)), (tr, finished)

    def advantages(params: dict, trs: Transition, last_x: jax.Array) -> tuple[jax.Array, jax.Array]:
        # a truncated step's target includes gamma * V(final_obs); then both kinds of end cut the trace
        reward = trs.reward + cfg.gamma * jnp.where(trs.truncated, policy(params, trs.final_obs)[1], 0.0)
        not_done = 1.0 - (trs.terminated | trs.truncated)
        next_values = jnp.concatenate([trs.value[1:], policy(params, last_x)[1][None]])
        deltas = reward + cfg.gamma * not_done * next_values - trs.value

        def back(gae: jax.Array, x: tuple) -> tuple:
            delta, nd = x
            gae = delta + cfg.gamma * cfg.gae_lambda * nd * gae
            return gae, gae

        _, adv = jax.lax.scan(back, jnp.zeros(n), (deltas, not_done), reverse=True)
        return adv, adv + trs.value

    def loss(params: dict, mb: tuple) -> tuple:
        trs, adv, target = mb
        out, value = policy(params, trs.obs)
        ratio = jnp.exp(head.log_prob(out, params["log_std"], trs.raw) - trs.logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        pg = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv).mean()
        clipped = trs.value + jnp.clip(value - trs.value, -cfg.clip, cfg.clip)
        vf = 0.5 * jnp.maximum((value - target) ** 2, (clipped - target) ** 2).mean()
        ent = head.entropy(out, params["log_std"]).mean()
        return pg + cfg.vf_coef * vf - cfg.ent_coef * ent, jnp.stack([pg, vf, ent])

    epoch = minibatch_epoch(opt, loss, batch, cfg.minibatches)

    def update(carry: tuple, _: None) -> tuple:
        params, opt_state, env_state, x, ep_return, key = carry
        key, rollout_key, epoch_key = jax.random.split(key, 3)
        (env_state, x, ep_return), (trs, finished) = jax.lax.scan(
            lambda c, k: env_step(params, c, k), (env_state, x, ep_return), jax.random.split(rollout_key, cfg.num_steps)
        )
        adv, target = advantages(params, trs, x)
        (params, opt_state), stats = jax.lax.scan(
            lambda s, k: epoch(s, k, (trs, adv, target)), (params, opt_state), jax.random.split(epoch_key, cfg.epochs)
        )
        out = {"return_sum": finished[:, 0].sum(), "episodes": finished[:, 1].sum(), "loss": stats.mean((0, 1))}
        return (params, opt_state, env_state, x, ep_return, key), out

    def chunk(carry: tuple, length: int) -> tuple:
        return jax.lax.scan(update, carry, None, length=length)

    return start, chunk, num_updates


def evaluate(env: envhub.Environment, params: dict, key: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(returns, finished)``: one whole episode in each of the batched ``env``'s members, played by ``params``.

    Actions are sampled from the policy, as in training. Each member's first episode counts; the loop
    stops when all have ended, or after 100,000 steps if the env has no time limit (``finished`` says).
    """
    head, n = head_for(env.single_action_space), env.num_envs
    limit = env.metadata.get("time_limit") or 100_000

    def running(carry: tuple) -> jax.Array:
        *_, done, t, _ = carry
        return ~done.all() & (t < limit)

    def step(carry: tuple) -> tuple:
        state, x, returns, done, t, key = carry
        key, act_key, step_key = jax.random.split(key, 3)
        out, _ = policy(params, x)
        state, ts = env.step(step_key, state, head.to_env(head.sample(out, params["log_std"], act_key)))
        returns = returns + jnp.where(done, 0.0, ts.reward)
        return state, flat_obs(ts.obs, n), returns, done | ts.terminated | ts.truncated, t + 1, key

    init_key, key = jax.random.split(key)
    state, ts = env.init(init_key)
    carry = (state, flat_obs(ts.obs, n), jnp.zeros(n), jnp.zeros(n, bool), jnp.int32(0), key)
    _, _, returns, done, _, _ = jax.lax.while_loop(running, step, carry)
    return returns, done


def train(env_id: str, cfg: Config, make_kwargs: dict | None = None, log: Callable = print) -> dict[str, Any]:
    """Train PPO on ``env_id``, then evaluate the final policy; return the metrics ``metrics.json`` holds."""
    make_kwargs = make_kwargs or {}
    with envhub.make(env_id, num_envs=cfg.num_envs, **make_kwargs) as env:
        obs_size = flat_obs(env.observation_space.sample(jax.random.key(0)), cfg.num_envs).shape[1]
        start, chunk, num_updates = build(envhub_layer(env), cfg, obs_size)
        per_chunk = max(1, num_updates // 20)
        t0 = time.perf_counter()
        carry = jax.jit(start)(jax.random.key(cfg.seed))
        compiled = jax.jit(chunk, static_argnums=1, donate_argnums=0).lower(carry, per_chunk).compile()
        compile_s = time.perf_counter() - t0
        sums, counts, chunk_s, steps = [], [], [], 0
        for _ in range(num_updates // per_chunk):
            t = time.perf_counter()
            carry, out = compiled(carry)
            out = jax.device_get(out)
            chunk_s.append(time.perf_counter() - t)
            train_s = sum(chunk_s)
            sums.append(out["return_sum"])
            counts.append(out["episodes"])
            steps += per_chunk * cfg.num_envs * cfg.num_steps
            got = counts[-1].sum()
            mean = sums[-1].sum() / got if got else float("nan")
            log(f"steps {steps:>10,}  mean return {mean:8.2f}  ({int(got)} episodes)  {steps / train_s:,.0f} steps/s")
    with envhub.make(env_id, num_envs=cfg.eval_episodes, **make_kwargs) as eval_env:
        t = time.perf_counter()
        eval_key = jax.random.fold_in(jax.random.key(cfg.seed), 1)  # not a key training used
        returns, finished = jax.device_get(jax.jit(functools.partial(evaluate, eval_env))(carry[0], eval_key))
        eval_s = time.perf_counter() - t
    log(f"final policy: mean return {returns.mean():.2f} over {returns.size} episodes ({eval_s:.0f} s)")
    sums, counts = np.concatenate(sums), np.concatenate(counts)
    last = max(1, round(0.1 * len(sums)))
    metrics = {"env_id": env_id, "seed": cfg.seed, "final_return": float(returns.mean())}
    metrics |= {"final_return_std": float(returns.std()), "eval_episodes": int(returns.size)}
    metrics |= {"eval_unfinished": int((~finished).sum()), "eval_seconds": eval_s}
    metrics |= {"train_return_last_10pct": _mean(sums[-last:], counts[-last:])}
    metrics |= {"steps_per_second": steps / train_s, "total_env_steps": steps, "train_seconds": train_s}
    metrics |= {"steps_per_second_median_chunk": per_chunk * cfg.num_envs * cfg.num_steps / float(np.median(chunk_s))}
    metrics |= {"compile_seconds": compile_s, "config": dataclasses.asdict(cfg), "make_kwargs": make_kwargs}
    return metrics | {"curve": _curve(sums, counts, cfg.num_envs * cfg.num_steps)}


def _mean(sums: np.ndarray, counts: np.ndarray) -> float | None:
    return float(sums.sum() / counts.sum()) if counts.sum() else None


def _curve(sums: np.ndarray, counts: np.ndarray, steps_per_update: int, points: int = 100) -> list[dict]:
    """Mean return of the episodes finished in each of up to ``points`` equal bins of updates."""
    edges = np.linspace(0, len(sums), min(points, len(sums)) + 1).astype(int)
    return [
        {"env_steps": int(hi * steps_per_update), "mean_return": _mean(sums[lo:hi], counts[lo:hi])}
        for lo, hi in zip(edges[:-1], edges[1:])
    ]


def plot(metrics: dict, path: Path) -> None:
    from matplotlib.figure import Figure  # no pyplot: no GUI backend

    pts = [p for p in metrics["curve"] if p["mean_return"] is not None]
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    ax.plot([p["env_steps"] for p in pts], [p["mean_return"] for p in pts])
    ax.set(xlabel="env steps", ylabel="mean episode return", title=f"PPO on {metrics['env_id']}")
    fig.savefig(path, dpi=100, bbox_inches="tight")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("env_id")
    parser.add_argument("--out", required=True, type=Path, help="folder for metrics.json and curve.png")
    parser.add_argument("--max-episode-steps", type=int, default=None, help="time limit passed to envhub.make")
    parser.add_argument("--no-plot", action="store_true", help="skip curve.png")
    for f in dataclasses.fields(Config):  # --num-envs, --lr, --anneal-lr/--no-anneal-lr, ...
        kind = {"action": argparse.BooleanOptionalAction} if f.type == "bool" else {"type": type(f.default)}
        parser.add_argument("--" + f.name.replace("_", "-"), default=f.default, **kind)
    args = parser.parse_args(argv)
    cfg = Config(**{f.name: getattr(args, f.name) for f in dataclasses.fields(Config)})
    kwargs = {} if args.max_episode_steps is None else {"max_episode_steps": args.max_episode_steps}
    metrics = train(args.env_id, cfg, kwargs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    if not args.no_plot:
        plot(metrics, args.out / "curve.png")
    print(f"final return {metrics['final_return']}, {metrics['steps_per_second']:,.0f} steps/s; wrote {args.out}/")
    return metrics


if __name__ == "__main__":
    main()
