"""A JAX-native env's compiled programs are pure XLA by default: no host callback in init, reset or step
(batched or not), under every wrapper, in ``rollout`` and on the sharded path; they export with
``jax.export`` and a second process loads them from JAX's persistent compilation cache."""

import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh

import envhub
from envhub import testing
from envhub import wrappers as w

pytestmark = pytest.mark.requires_plugin("gymnax")

KEY = jax.random.key(0)


def _lowered(fn, *args):
    return jax.jit(fn).lower(*args).as_text()


_host_calls = testing.host_callbacks


class _Lives(w.TimeStepWrapper):
    """Gives CartPole an ``info["lives"]`` (always 1) so that EpisodicLife applies."""

    def _map(self, ts):
        return ts.replace(info={**ts.info, "lives": jnp.ones_like(ts.reward, jnp.int32)})


def _pendulum(num_envs):
    return envhub.make("gymnax/Pendulum-v1", num_envs=num_envs)


def _cartpole(num_envs):
    return envhub.make("gymnax/CartPole-v1", num_envs=num_envs)


WRAPPED = {  # every wrapper of envhub.wrappers that wraps an env (ShardedEnvironment: its own test)
    "ActionRepeat": lambda n: w.ActionRepeat(_cartpole(n), 2),
    "ClipAction": lambda n: w.ClipAction(_pendulum(n)),
    "ClipReward": lambda n: w.ClipReward(_cartpole(n)),
    "Discretize": lambda n: w.Discretize(_pendulum(n), 5),
    "DropFinalObs": lambda n: w.DropFinalObs(_cartpole(n)),
    "EpisodicLife": lambda n: w.EpisodicLife(_Lives(_cartpole(n))),
    "FlattenObservation": lambda n: w.FlattenObservation(_cartpole(n)),
    "FrameStack": lambda n: w.FrameStack(_cartpole(n), 3),
    "IgnoreTruncation": lambda n: w.IgnoreTruncation(_cartpole(n)),
    "NormalizeObservation": lambda n: w.NormalizeObservation(_cartpole(n)),
    "NormalizeReward": lambda n: w.NormalizeReward(_cartpole(n)),
    "RecordEpisodeStatistics": lambda n: w.RecordEpisodeStatistics(_cartpole(n)),
    "RescaleAction": lambda n: w.RescaleAction(_pendulum(n)),
    "StickyAction": lambda n: w.StickyAction(_cartpole(n)),
    "TimeLimit": lambda n: w.TimeLimit(_cartpole(n), 5),
    "TransformAction": lambda n: w.TransformAction(_cartpole(n), lambda a: 1 - a),
    "TransformObservation": lambda n: w.TransformObservation(_cartpole(n), lambda o: o * 2),
    "TransformReward": lambda n: w.TransformReward(_cartpole(n), lambda r: r * 2),
    "VmapEnvironment": lambda n: w.VmapEnvironment(_cartpole(None), n or 2),
}


def test_every_wrapper_is_listed_here():
    wrapping = {
        name
        for name in w.__all__
        if isinstance(getattr(w, name), type) and issubclass(getattr(w, name), w.Wrapper) and name[0] != "_"
    }
    bases = {"Wrapper", "StatefulWrapper", "TimeStepWrapper", "ShardedEnvironment"}
    assert wrapping - bases == set(WRAPPED)


@pytest.mark.parametrize("num_envs", [None, 3])
@pytest.mark.parametrize("name", sorted(WRAPPED))
def test_no_host_callback_in_any_program(name, num_envs):
    env = WRAPPED[name](num_envs)
    state, _ = env.init(KEY)
    action = env.action_space.sample(KEY)
    programs = {
        "init": _lowered(env.init, KEY),
        "reset": _lowered(env.reset, KEY, state),
        "step": _lowered(env.step, KEY, state, action),
    }
    assert {k: _host_calls(v) for k, v in programs.items()} == {"init": [], "reset": [], "step": []}
    if num_envs is not None:  # the opt-in is the one way a callback gets in (once per wrapper is enough)
        env.unwrapped.validate_actions = "strict"
        assert _host_calls(_lowered(env.step, KEY, state, action))


def test_rollout_and_user_vmap_are_pure():
    env = _cartpole(4)
    program = _lowered(lambda k: envhub.rollout(env, envhub.random_policy(env), k, 8)[2].reward, KEY)
    assert _host_calls(program) == []
    one = _cartpole(None)
    keys = jax.random.split(KEY, 3)
    states, _ = jax.vmap(one.init)(keys)
    assert _host_calls(_lowered(jax.vmap(one.step), keys, states, jnp.ones(3, jnp.int32))) == []


def test_the_sharded_path_is_pure():
    mesh = Mesh(np.array(jax.devices()[:1]), ("envs",))
    env = envhub.make("gymnax/CartPole-v1", num_envs=4, mesh=mesh)
    start = env.init(KEY)
    program = _lowered(lambda k, s: envhub.rollout(env, envhub.random_policy(env), k, 4, start=s), KEY, start)
    assert _host_calls(program) == [] and _host_calls(_lowered(env.init, KEY)) == []


def test_export_round_trips_a_wrapped_step_and_a_rollout():
    env = w.RecordEpisodeStatistics(w.TimeLimit(_cartpole(4), 5))
    state, _ = env.init(KEY)
    action = env.action_space.sample(KEY)
    exported = jax.export.deserialize(jax.export.export(jax.jit(env.step))(KEY, state, action).serialize())
    same = jax.tree.map(np.array_equal, exported.call(KEY, state, action), jax.jit(env.step)(KEY, state, action))
    assert all(jax.tree.leaves(same))

    def run(key):
        return envhub.rollout(env, envhub.random_policy(env), key, 16)[2].reward

    blob = jax.export.export(jax.jit(run))(KEY).serialize()
    assert np.array_equal(jax.export.deserialize(blob).call(KEY), jax.jit(run)(KEY))
    env.unwrapped.validate_actions = "strict"
    with pytest.raises(Exception, match="host_callbacks"):  # the opt-in's documented cost
        jax.export.export(jax.jit(env.step))(KEY, state, action).serialize()


SCRIPT = textwrap.dedent(
    """
    import json, os, sys, jax
    from jax.experimental import checkify
    import envhub
    hits = []
    jax.monitoring.register_event_listener(lambda e, **kw: hits.append(e) if e.endswith("cache_hits") else None)
    if sys.argv[1] == "first":  # another checkify program first: its checks' numbers must not leak into ours
        jax.jit(checkify.checkify(lambda x: checkify.check(x > 0, "x <= 0") or x))(1.0)
    found = {}
    for mode, validate in (("default", True), ("strict", "strict"), ("checked", True)):
        env = envhub.make("gymnax/CartPole-v1", num_envs=8, validate_actions=validate)
        def rollout(key):
            return envhub.rollout(env, envhub.random_policy(env), key, 20)[2].reward.sum()
        rollout.__name__ = f"probe_rollout_{mode}"  # names its cache entries
        before = len(hits)
        compiled = envhub.checked(rollout) if mode == "checked" else jax.jit(rollout)
        found[mode] = {"total": float(compiled(jax.random.key(0))), "hits": len(hits) - before}
    print(json.dumps(found), flush=True)
    os._exit(0)  # the cache entries are written at compile: skip only the interpreter's teardown
    """
)


def test_a_second_process_loads_the_programs_from_the_cache(tmp_path):
    env = {
        **os.environ,
        "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache"),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    }

    def run(which):
        done = subprocess.run([sys.executable, "-c", SCRIPT, which], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = run("first")
    stored = {mode: [p for p in (tmp_path / "cache").glob(f"jit_probe_rollout_{mode}-*-cache")] for mode in first}
    second = run("second")
    for mode in ("default", "strict", "checked"):
        assert first[mode]["hits"] == 0 and first[mode]["total"] == second[mode]["total"], mode
    # the default rollout: its entry stored, then a hit in the second process
    assert len(stored["default"]) == 1 and second["default"]["hits"] >= 1
    if tuple(int(part) for part in jax.__version__.split(".")[:2]) < (0, 11):
        assert stored["strict"] == []  # a program with a host callback is never cached: the opt-in's cost
    else:  # jax 0.11 writes it too (measured on 3.12/3.13): the cost of "strict" is then its trace alone
        assert len(stored["strict"]) <= 1
    # envhub.checked's program does not depend on what the process traced before (checkify's numbering)
    assert second["checked"]["hits"] >= 1
