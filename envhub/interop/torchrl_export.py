"""``to_torchrl``: a single-agent envhub env as a TorchRL ``EnvBase`` (collectors, transforms, losses).

TorchRL's contract: ``step`` writes ``("next", obs)``, ``("next", "reward")`` and ``("next", "done" / "terminated" /
"truncated")`` (shape ``(*batch_size, 1)``); a collector (``step_and_maybe_reset``) then calls ``reset`` with a
``"_reset"`` mask of the envs that ended. envhub auto-resets in the same step, so the export splits that step:
``"next"`` holds ``final_obs`` (the observation reached: bootstrap a truncation from it) and the masked reset hands
out ``obs``, the first observation of the episode envhub already started, with no call. Envs in a mask that did not
just end, and a full ``reset()``, go through envhub's ``reset(key, state, where)`` (the first through ``init``).

Specs: ``Discrete`` actions are int64 ``Categorical`` (``OneHot`` with ``one_hot_actions=True``), 1-d
``MultiDiscrete`` ones ``MultiCategorical``/``MultiOneHot`` (shifted to count from 0); other integer spaces
``Categorical`` (one ``Discrete`` from 0) or integer ``Bounded``; a float ``Box`` ``Bounded`` where its span is finite
in its dtype, else ``Unbounded``; a bool ``Box`` ``Binary``; a ``Tree`` ``Composite``, its leaves at the root by their
keys (as TorchRL's own wrappers do; a tuple's under ``"observation"``, an action's under ``"action"``). All envs step in
one jitted call (``compiled.Runner``: key and state stay on the JAX device) whose outputs are one buffer handed to
torch with DLPack (no copy on the same device). ``set_seed(s)``: the key stream ``jax.random.key(s)``. Actions are
checked by ``env.step``'s rule (``ActionError``) on the host before anything runs.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import jax
import numpy as np

from envhub import spaces
from envhub.core.arguments import an_environment, single_agent_only
from envhub.core.env import Environment
from envhub.errors import ActionError, ClosedEnvironmentError, InvalidArgumentError, MissingDependencyError
from envhub.interop.compiled import Runner, seed_key
from envhub.registry.plugin_api import compatible_core_range

try:
    import torch
    import torchrl.data as rl
    from tensordict import TensorDict, TensorDictBase
    from torchrl.envs import EnvBase
except ImportError as exc:  # pragma: no cover - exercised when torch or torchrl is absent
    line = f'pip install "envhub[torchrl]{compatible_core_range()}"'  # the range: never PyPI's unrelated envhub 1.x
    raise MissingDependencyError("envhub.interop.to_torchrl", "torchrl", line) from exc

#: Keys an observation may not take at the root of a step's tensordict (TorchRL's own).
RESERVED = {"action", "reward", "done", "terminated", "truncated", "next", "_reset", "is_init"}
_NAMES = "bool float16 bfloat16 float32 float64 int8 int16 int32 int64 uint8 uint16 uint32".split()
_DTYPES = {np.dtype(getattr(jax.numpy, n)): getattr(torch, n) for n in _NAMES}  # the dtypes both have
_SIGNED = {1: torch.int8, 2: torch.int16}


class _TorchRunner(Runner):
    """``compiled.Runner`` whose outputs stay on the device: the packed TimeStep as torch views (one DLPack call)."""

    def __init__(self, env: Environment[Any, Any, Any], seed: int, device: Any):
        super().__init__(env, seed)
        self.device = device
        self._readers: dict[str, tuple[Any, list[Any]]] = {}
        self._rekey = jax.jit(lambda c, k: self._carry.pack((k, self._unpack(c)[1])))  # type: ignore[union-attr]

    def reseed(self, seed: int) -> None:
        """The key stream from ``seed``: the next reset is ``init``'s (from this seed) whether or not one ran before."""
        self.key = seed_key(seed)
        if self.carry is not None:  # the key reset_where splits, as reset() would hand init
            self.key, sub = jax.random.split(self.key)
            self.carry = self._rekey(self.carry, sub)

    def _host(self, name: str, out: jax.Array) -> Any:
        packer = self._out[name]
        if name not in self._readers:
            self._readers[name] = (packer.treedef, [_torch_reader(leaf) for leaf in packer.leaves])
        treedef, readers = self._readers[name]
        words = torch.utils.dlpack.from_dlpack(out).view(torch.int32)
        if words.device != self.device:
            words = words.to(self.device)
        return treedef.unflatten([read(words) for read in readers])


def _torch_reader(leaf: Any) -> Any:
    """``words -> tensor`` of one ``Packer`` leaf: a view where the dtype is 32-bit, a small copy otherwise."""
    start, stop, shape = leaf.start, leaf.start + leaf.words, leaf.shape
    if leaf.impl is not None or leaf.dtype not in _DTYPES:  # keys and odd dtypes: never read by the export
        return lambda w: None
    dtype = _DTYPES[leaf.dtype]
    if leaf.dtype.itemsize == 4:
        return lambda w: w[start:stop].view(dtype).view(shape)
    if leaf.dtype == np.bool_:
        return lambda w: (w[start:stop] != 0).view(shape)
    if leaf.dtype.itemsize == 8:
        return lambda w: w[start:stop].clone().view(dtype).view(shape)
    return lambda w: w[start:stop].to(_SIGNED[leaf.dtype.itemsize]).view(dtype).view(shape)


class EnvhubTorchRLEnv(EnvBase):  # type: ignore[misc,unused-ignore]
    """A single-agent envhub env behind TorchRL's ``EnvBase`` (see the module docstring); ``.env`` is the envhub env."""

    def __init__(
        self, env: Environment[Any, Any, Any], device: Any = None, one_hot_actions: bool = False, seed: int = 0
    ):
        jax_device = jax.devices()[0]
        if device is None:
            device = "cpu" if jax_device.platform == "cpu" else f"cuda:{jax_device.id}"
        batch = () if env.num_envs is None else (env.num_envs,)
        super().__init__(device=device, batch_size=torch.Size(batch))
        self.env, self.one_hot_actions = env, one_hot_actions
        self._runner = _TorchRunner(env, seed, self.device)
        obs_keys, obs_specs = _keyed(env.single_observation_space, env.id, "observation", batch, False)
        act_keys, act_specs = _keyed(env.single_action_space, env.id, "action", batch, one_hot_actions)
        self._obs_keys = obs_keys
        act = env.single_action_space
        self._act_leaves = list(zip(act_keys, act.leaves if isinstance(act, spaces.Tree) else [act]))
        self.observation_spec = _composite(obs_keys, obs_specs, batch)
        self.full_action_spec = _composite(act_keys, act_specs, batch)
        self.reward_spec = rl.Unbounded(shape=(*batch, 1), dtype=torch.float32)
        flag = rl.Categorical(2, shape=(*batch, 1), dtype=torch.bool)
        self.full_done_spec = rl.Composite(done=flag, terminated=flag.clone(), truncated=flag.clone(), shape=batch)
        self._obs: Any = None  # the observation envhub's state is at (after an end: the next episode's first)
        self._ended: Any = None  # the envs whose episode the last step ended (their reset is already done)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        ts = self._runner.step(self._action(tensordict))
        if ts.final_obs is None:
            raise InvalidArgumentError(
                f"to_torchrl: {self.env.id!r} drops final_obs (a wrapper's drop_final_obs=True), so TorchRL's "
                f"('next', ...) would hold the next episode's first observation; make the env without dropping it."
            )
        terminated, truncated = ts.terminated.view(*self.batch_size, 1), ts.truncated.view(*self.batch_size, 1)
        self._obs, self._ended = jax.tree.leaves(ts.obs), ts.terminated | ts.truncated
        out = dict(zip(self._obs_keys, jax.tree.leaves(ts.final_obs)))
        out.update(reward=ts.reward.view(*self.batch_size, 1), terminated=terminated, truncated=truncated)
        out["done"] = terminated | truncated
        return TensorDict(out, batch_size=self.batch_size, device=self.device)

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        if self.env.closed:
            raise ClosedEnvironmentError(self.env.id, "reset")
        mask = None if tensordict is None else tensordict.get("_reset", None)
        if self._runner.carry is None:  # the first reset: init
            obs = jax.tree.leaves(self._runner.reset().obs)
        else:
            fresh = torch.ones(self.batch_size, dtype=torch.bool) if mask is None else mask.reshape(self.batch_size)
            if mask is not None and self._ended is not None:
                fresh = fresh & ~self._ended.to(fresh.device)  # those envhub reset in the step that ended them
            obs = self._obs
            if bool(fresh.any()):
                new = jax.tree.leaves(self._runner.reset_where(fresh.cpu().numpy()).obs)
                where = fresh.to(self.device)
                obs = [
                    torch.where(where.view(*where.shape, *[1] * (n.ndim - where.ndim)), n, o) for n, o in zip(new, obs)
                ]
        self._obs, self._ended = obs, None
        out = dict(zip(self._obs_keys, obs))
        false = torch.zeros((*self.batch_size, 1), dtype=torch.bool, device=self.device)
        out.update(done=false, terminated=false.clone(), truncated=false.clone())
        return TensorDict(out, batch_size=self.batch_size, device=self.device)

    def _set_seed(self, seed: int | None) -> None:
        if seed is not None:
            self._runner.reseed(seed)

    def _action(self, tensordict: TensorDictBase) -> Any:
        """The action as the envhub env takes it (NumPy, on the host): one-hot decoded, shifted by ``start`` where the
        spec counts from 0; ``Runner.step`` then applies ``env.step``'s rule (structure, shape, dtype, values)."""
        leaves = []
        for key, space in self._act_leaves:
            value = tensordict.get(key, None)
            if value is None:
                raise ActionError(self.env.id, f"the tensordict has no {key!r} entry", self.env.action_space)
            if _counted(space):
                if self.one_hot_actions:
                    value = self._decode_one_hot(value, space)
                if space.start.any():
                    value = value + torch.as_tensor(space.start, device=value.device)
            leaves.append(value.detach().cpu().numpy())
        space = self.env.single_action_space
        return space.treedef.unflatten(leaves) if isinstance(space, spaces.Tree) else leaves[0]

    def _decode_one_hot(self, value: Any, space: spaces.MultiDiscrete) -> Any:
        """The indices of a one-hot (``OneHot``/``MultiOneHot``) action; ``ActionError`` for any other tensor."""
        nvec = [int(n) for n in space.nvec.reshape(-1)]
        need = (*self.batch_size, sum(nvec))
        problem = f"one-hot shape {tuple(value.shape)} where {need} is needed" if value.shape != need else None
        parts = value.split(nvec, dim=-1) if problem is None else []
        if problem is None and not all(bool(((p == 0) | (p == 1)).all() and (p.sum(-1) == 1).all()) for p in parts):
            problem = "an action that is not one-hot (one 1 per row, else 0)"
        if problem is not None:
            raise ActionError(self.env.id, problem, self.env.action_space)
        index = [p.to(torch.uint8).argmax(-1) for p in parts]
        return index[0] if space.shape == () else torch.stack(index, -1)

    def close(self, *, raise_if_closed: bool = True) -> None:
        """TorchRL's close; the envhub env stays open: its maker closes it (a ``Collector`` calls this on finishing)."""
        super().close(raise_if_closed=raise_if_closed)

    def __repr__(self) -> str:
        return f"EnvhubTorchRLEnv({self.env!r}, batch_size={self.batch_size}, device={self.device})"


def _keyed(space: spaces.Space, env_id: str, what: str, batch: Any, one_hot: bool) -> tuple[list[Any], list[Any]]:
    """The tensordict key and TorchRL spec of each leaf of ``space`` (``what``: ``"observation"`` or ``"action"``)."""
    named, action = f"the {what} space of {env_id!r}", what == "action"
    if not isinstance(space, spaces.Tree):
        return [what], [to_torchrl_spec(space, batch, action, one_hot, named)]
    paths, _ = jax.tree_util.tree_flatten_with_path(space.spaces, is_leaf=lambda s: isinstance(s, spaces.Space))
    keys, specs = [], []
    for path, leaf in paths:
        names = tuple(_name(p) for p in path)
        key = names if not action and names and not names[0].isdigit() else (what, *names)
        if key[0] in RESERVED and not action:
            raise InvalidArgumentError(
                f"to_torchrl: the observation space of {env_id!r} has an entry {key[0]!r}, a key TorchRL keeps for "
                f"itself ({sorted(RESERVED)}); rename it (envhub.wrappers.TransformObservation)."
            )
        keys.append(key if len(key) > 1 else key[0])
        specs.append(to_torchrl_spec(leaf, batch, action, one_hot, f"{named} at {key}"))
    return keys, specs


def _name(entry: Any) -> str:
    """A path entry's key: a dict's key, a named tuple's field, a tuple's index."""
    return str(next((getattr(entry, a) for a in ("key", "name", "idx") if hasattr(entry, a)), entry))


def _composite(keys: list[Any], specs: list[Any], batch: tuple[int, ...]) -> Any:
    composite = rl.Composite(shape=batch)
    for key, spec in zip(keys, specs):
        if isinstance(key, tuple):
            for i in range(1, len(key)):
                if key[:i] not in composite.keys(True):
                    composite[key[:i]] = rl.Composite(shape=batch)
        composite[key] = spec
    return composite


def _counted(space: spaces.Space) -> TypeGuard[spaces.MultiDiscrete]:
    """An integer action space TorchRL counts from 0 (``Categorical``, ``MultiCategorical``, one-hot): one
    ``Discrete``, or a 1-d ``MultiDiscrete`` (any start: the export shifts the values)."""
    return isinstance(space, spaces.MultiDiscrete) and len(space.shape) == int(not isinstance(space, spaces.Discrete))


def to_torchrl_spec(
    space: spaces.Space, batch: tuple[int, ...] = (), action: bool = False, one_hot: bool = False, what: str = "a space"
) -> rl.TensorSpec:
    """The TorchRL spec of a leaf ``space`` for envs of batch shape ``batch`` (an ``action`` space's integers are
    ``Categorical``/``MultiCategorical`` from 0 and int64, one-hot with ``one_hot``).

    Raises:
        InvalidArgumentError: ``space`` (named with ``what``) has no TorchRL spec.
    """
    if isinstance(space, spaces.Tree) or space.dtype not in _DTYPES:
        raise InvalidArgumentError(
            f"to_torchrl: {what}, {space!r}, has no TorchRL spec (TorchRL specs hold bool, int8-int64, uint8-uint32 "
            f"and float tensors); convert it first (envhub.wrappers.TransformObservation, or a wrapper of your own)."
        )
    dtype, shape = _DTYPES[space.dtype], (*batch, *space.shape)
    if isinstance(space, spaces.MultiDiscrete):
        if action and _counted(space):  # TorchRL's default int64 actions, counted from 0
            nvec, discrete = [int(n) for n in space.nvec.reshape(-1)], isinstance(space, spaces.Discrete)
            if one_hot:
                return rl.OneHot(nvec[0], (*batch, nvec[0])) if discrete else rl.MultiOneHot(nvec, (*batch, sum(nvec)))
            return rl.Categorical(nvec[0], shape) if discrete else rl.MultiCategorical(nvec, shape)
        if isinstance(space, spaces.Discrete) and space.shape == () and not space.start_value:
            return rl.Categorical(space.n, shape, dtype=dtype)
        low, high = torch.as_tensor(space.start), torch.as_tensor(space.start + space.nvec - 1)
        return rl.Bounded(low.expand(shape), high.expand(shape), shape, dtype=dtype)
    assert isinstance(space, spaces.Box)
    if space.dtype == np.bool_:
        return rl.Binary(shape=shape, dtype=torch.bool) if space.shape else rl.Categorical(2, shape, dtype=torch.bool)
    with np.errstate(over="ignore", invalid="ignore"):
        span = space.high.astype(space.dtype) - space.low.astype(space.dtype)  # inf where it overflows the dtype
    if not np.all(np.isfinite(span.astype(np.float64))):
        return rl.Unbounded(shape=shape, dtype=dtype)
    low, high = (torch.as_tensor(b.astype(space.dtype)).expand(shape) for b in (space.low, space.high))
    return rl.Bounded(low, high, shape, dtype=dtype)


def to_torchrl(
    env: Environment[Any, Any, Any], device: Any = None, one_hot_actions: bool = False, seed: int = 0
) -> EnvhubTorchRLEnv:
    """Expose a single-agent envhub env (batched or not, JAX-native or host) as a TorchRL ``EnvBase``.

    ``batch_size`` is ``[num_envs]`` (``[]`` unbatched); ``device``: the torch device of the tensors (default: the
    JAX device's); ``one_hot_actions``: ``OneHot`` integer actions instead of ``Categorical``; ``seed``: the key
    stream until ``set_seed``.

    Raises:
        InvalidArgumentError: ``env`` is not an envhub env, is multi-agent, or a space has no TorchRL spec.
        ClosedEnvironmentError: ``env`` is closed.
    """
    an_environment("to_torchrl", env)
    if env.closed:
        raise ClosedEnvironmentError(env.id, "to_torchrl")
    single_agent_only(
        "to_torchrl", env,
        "use the PettingZoo export (envhub.interop.to_pettingzoo_parallel; TorchRL's PettingZooWrapper takes it) "
        "or, for JaxMARL code, envhub.interop.to_jaxmarl",
    )  # fmt: skip
    return EnvhubTorchRLEnv(env, device, one_hot_actions, seed)


__all__ = ["EnvhubTorchRLEnv", "to_torchrl", "to_torchrl_spec"]
