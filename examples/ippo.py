"""IPPO with shared parameters on a simultaneous multi-agent envhub env (e.g. JaxMARL's MPE simple_spread).

    python examples/ippo.py [ENV_ID] [--num-envs N] [--total-steps T] [--seed S] --out DIR [hyper-parameters]

Every agent of every env is one row of the batch: the same actor and critic (``examples/ppo.py``'s, on the
agent's own observation) act for all agents, and each agent learns from its own reward, with the
episode-level ``terminated``/``truncated`` (a truncated episode bootstraps from V(``ts.final_obs``)). Needs
agents with observations of one shape and one ``Discrete`` or float ``Box`` action space (MPE simple_spread,
simple_reference, ...). ``--total-steps`` counts env steps (one per ``step`` of one env, all agents).

After training, the final policy and a uniformly random one each play ``eval_episodes`` whole episodes;
``DIR/metrics.json`` has both mean returns per agent (``final_return``, ``random_return``), the settings and the
learning curve (mean return per agent of the episodes that ended), and ``DIR/curve.png``. Needs
``pip install -e ".[examples]"`` (optax, matplotlib) and the jaxmarl plugin (``.[jaxmarl]``).

    python examples/ippo.py jaxmarl/MPE_simple_spread_v3 --out runs/spread    # the run file's settings

The committed run: examples/runs/ippo_spread/metrics.json (docs/multi-agent.md quotes it).
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

sys.path.insert(0, str(Path(__file__).resolve().parent))  # examples/ppo.py, run from anywhere
import ppo  # noqa: E402

import envhub  # noqa: E402

# examples/ppo.py's Config fields this example sets otherwise (the committed run's settings): 64 envs, one
# MPE episode (26 steps) per update. (A learning rate of 1e-3 or 5e-4 learned, then unlearned: worse than random.)
DEFAULTS = {"num_envs": 64, "num_steps": 26, "total_steps": 1_500_000}


def agents_as_batch(env: envhub.Environment) -> ppo.EnvLayer:
    """``env`` (batched, multi-agent) as the single-agent batch PPO trains on: ``num_envs x agents`` rows.

    Observations and rewards are stacked agent by agent (row ``i * agents + j`` is env ``i``'s agent ``j``);
    the episode flags, which are per env, are repeated for each of its agents.
    """
    agents, n = env.agents, env.num_envs

    def rows(ts: Any) -> Any:
        def stack(tree: Any) -> jax.Array:
            return jnp.stack([ppo.flat_obs(tree[a], n) for a in agents], 1).reshape(n * len(agents), -1)

        return ts.replace(
            obs=stack(ts.obs),
            final_obs=stack(ts.final_obs),
            reward=jnp.stack([ts.reward[a] for a in agents], 1).reshape(-1),
            terminated=jnp.repeat(ts.terminated, len(agents)),
            truncated=jnp.repeat(ts.truncated, len(agents)),
        )

    def init(key: jax.Array) -> Any:
        state, ts = env.init(key)
        return state, rows(ts)

    def step(key: jax.Array, state: Any, action: jax.Array) -> Any:
        per_env = action.reshape(n, len(agents), *action.shape[1:])
        state, ts = env.step(key, state, {a: per_env[:, j] for j, a in enumerate(agents)})
        return state, rows(ts)

    return ppo.EnvLayer(init, step, env.single_action_space[agents[0]])


def evaluate(layer: ppo.EnvLayer, params: dict | None, rows: int, limit: int, key: jax.Array) -> jax.Array:
    """Each row's return over its env's first episode (``limit`` steps at most), acting with ``params``, or
    uniformly at random when ``params`` is None."""
    head = ppo.head_for(layer.action_space)

    def act(x: jax.Array, key: jax.Array) -> jax.Array:
        if params is None:
            return head.to_env(jax.random.randint(key, (rows,), 0, head.size))
        out, _ = ppo.policy(params, x)
        return head.to_env(head.sample(out, params["log_std"], key))

    def body(carry: tuple, key: jax.Array) -> tuple:
        state, x, returns, done = carry
        act_key, step_key = jax.random.split(key)
        state, ts = layer.step(step_key, state, act(x, act_key))
        returns = returns + jnp.where(done, 0.0, ts.reward)
        return (state, ts.obs, returns, done | ts.terminated | ts.truncated), None

    init_key, key = jax.random.split(key)
    state, ts = layer.init(init_key)
    carry = (state, ts.obs, jnp.zeros(rows), jnp.zeros(rows, bool))
    (_, _, returns, done), _ = jax.lax.scan(body, carry, jax.random.split(key, limit))
    return jnp.where(done, returns, jnp.nan)


def train(env_id: str, cfg: ppo.Config, log: Any = print) -> dict[str, Any]:
    """Train IPPO on ``env_id`` (``cfg.num_envs`` envs), evaluate the final and a random policy; the metrics."""
    with envhub.make(env_id, num_envs=cfg.num_envs) as env:
        num_agents, limit = len(env.agents), env.metadata["time_limit"]
        if not num_agents or not limit:
            raise envhub.errors.InvalidArgumentError(
                f"examples/ippo.py needs a multi-agent env with a time limit; {env_id!r} is not."
            )
        layer = agents_as_batch(env)
        rows = cfg.num_envs * num_agents
        agent_cfg = dataclasses.replace(cfg, num_envs=rows, total_steps=cfg.total_steps * num_agents)
        obs_size = int(layer.init(jax.random.key(0))[1].obs.shape[1])
        start, chunk, num_updates = ppo.build(layer, agent_cfg, obs_size)
        per_chunk = max(1, num_updates // 20)
        t0 = time.perf_counter()
        carry = jax.jit(start)(jax.random.key(cfg.seed))
        compiled = jax.jit(chunk, static_argnums=1, donate_argnums=0).lower(carry, per_chunk).compile()
        compile_s, train_s, steps, sums, counts = time.perf_counter() - t0, 0.0, 0, [], []
        for _ in range(num_updates // per_chunk):
            t = time.perf_counter()
            carry, out = compiled(carry)
            out = jax.device_get(out)
            train_s += time.perf_counter() - t
            sums.append(out["return_sum"])
            counts.append(out["episodes"])
            steps += per_chunk * cfg.num_envs * cfg.num_steps
            mean = counts[-1].sum() and sums[-1].sum() / counts[-1].sum()
            log(f"env steps {steps:>10,}  mean return per agent {mean:8.2f}  {steps / train_s:,.0f} env steps/s")
    with envhub.make(env_id, num_envs=cfg.eval_episodes) as eval_env:
        eval_layer, eval_rows = agents_as_batch(eval_env), cfg.eval_episodes * num_agents
        key = jax.random.fold_in(jax.random.key(cfg.seed), 1)  # not a key training used
        run = jax.jit(lambda p, k: evaluate(eval_layer, p, eval_rows, limit, k))
        final = np.asarray(run(carry[0], key))
        random = np.asarray(jax.jit(lambda k: evaluate(eval_layer, None, eval_rows, limit, k))(key))
    log(f"final policy: mean return per agent {np.nanmean(final):.2f}; random policy {np.nanmean(random):.2f}")
    sums, counts = np.concatenate(sums), np.concatenate(counts)
    metrics = {"env_id": env_id, "seed": cfg.seed, "agents": num_agents, "final_return": float(np.nanmean(final))}
    metrics |= {"final_return_std": float(np.nanstd(final)), "random_return": float(np.nanmean(random))}
    metrics |= {"eval_episodes": cfg.eval_episodes, "eval_unfinished": int(np.isnan(final).sum())}
    metrics |= {"total_env_steps": steps, "train_seconds": train_s, "env_steps_per_second": steps / train_s}
    metrics |= {"compile_seconds": compile_s, "config": dataclasses.asdict(cfg)}
    return metrics | {"curve": ppo._curve(sums, counts, cfg.num_envs * cfg.num_steps)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("env_id", nargs="?", default="jaxmarl/MPE_simple_spread_v3")
    parser.add_argument("--out", required=True, type=Path, help="folder for metrics.json and curve.png")
    parser.add_argument("--no-plot", action="store_true", help="skip curve.png")
    for f in dataclasses.fields(ppo.Config):
        kind = {"action": argparse.BooleanOptionalAction} if f.type == "bool" else {"type": type(f.default)}
        parser.add_argument("--" + f.name.replace("_", "-"), default=DEFAULTS.get(f.name, f.default), **kind)
    args = parser.parse_args(argv)
    cfg = ppo.Config(**{f.name: getattr(args, f.name) for f in dataclasses.fields(ppo.Config)})
    metrics = train(args.env_id, cfg)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    if not args.no_plot:
        ppo.plot({**metrics, "env_id": f"{args.env_id} (IPPO, per agent)"}, args.out / "curve.png")
    print(
        f"final return per agent {metrics['final_return']:.2f} (random {metrics['random_return']:.2f}); wrote {args.out}/"
    )
    return metrics


if __name__ == "__main__":
    main()
