"""``to_torchrl``: a single-agent envhub env as a TorchRL ``EnvBase`` (collectors, transforms, losses).

TorchRL's contract: ``step`` writes ``("next", obs)``, ``("next", "reward")`` and ``("next", "done" / "terminated" /
"truncated")`` (shape ``(*batch_size, 1)``); a collector (``step_and_maybe_reset``) then calls ``reset`` with a
``"_reset"`` mask of the envs that ended. envhub auto-resets in the same step, so the export splits that step:
``"next"`` holds ``final_obs`` (the observation reached: bootstrap a truncation from it) and the masked reset hands
out ``obs``, the first observation of the episode envhub already started, with no call. Envs in a mask that did not
just end, and a full ``reset()``, go through envhub's ``reset(key, state, where)`` (the first through ``init``).

Specs: ``envhub.interop.torchrl_specs``. All envs step in one jitted call (``compiled.Runner``: key and state stay on
the JAX device) whose outputs are one buffer handed to torch with DLPack (no copy on the same device).
``set_seed(s)``: the key stream ``jax.random.key(s)``. Actions are checked by ``env.step``'s rule (``ActionError``)
on the host before anything runs. The contract (refusals, devices, final_obs, close, pickling) is
``envhub.interop.contract``'s.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from envhub import spaces
from envhub.errors import ActionError, ClosedEnvironmentError
from envhub.interop.compiled import Runner, seed_key
from envhub.interop.contract import Exported, Made, Target, library_missing
from envhub.interop.flags import checked_device, checked_mask
from envhub.native.auto_reset import still_to_restart

try:
    import torch
    import torchrl.data as rl
    from tensordict import TensorDict, TensorDictBase
    from torchrl.envs import EnvBase
except ImportError as exc:  # pragma: no cover - exercised when torch or torchrl is absent
    raise library_missing("to_torchrl", "torchrl", "torchrl") from exc

from envhub.interop.torchrl_specs import DTYPES, composite, counted, keyed_specs, to_torchrl_spec  # noqa: E402

_SIGNED = {1: torch.int8, 2: torch.int16}
TARGET = Target(
    "to_torchrl",
    "TorchRL",
    batched=None,
    reached="('next', 'observation')",
    fixes={
        "multi-agent": (
            "use the PettingZoo export (envhub.interop.to_pettingzoo_parallel; TorchRL's PettingZooWrapper takes it) "
            "or, for JaxMARL code, envhub.interop.to_jaxmarl"
        )
    },
)


def to_torchrl(env: Any, device: Any = None, one_hot_actions: bool = False, seed: int = 0) -> EnvhubTorchRLEnv:
    """Expose a single-agent envhub env (batched or not, JAX-native or host) as a TorchRL ``EnvBase``.

    ``batch_size`` is ``[num_envs]`` (``[]`` unbatched); ``device``: the torch device of the tensors (default: the
    JAX device's); ``one_hot_actions``: ``OneHot`` integer actions instead of ``Categorical``; ``seed``: the key
    stream until ``set_seed``. It pickles as this call (the env by its make id), for TorchRL's multiprocess
    collectors.

    Raises:
        InvalidArgumentError: ``env`` is not a single-agent envhub env or drops ``final_obs``, or a space has no
            TorchRL spec; ``device`` is none this install has; ``one_hot_actions`` is no bool; ``seed`` is no int
            from 0 to 2**63 - 1.
        ClosedEnvironmentError: ``env`` is closed.
    """
    made = TARGET.check(env, one_hot_actions=one_hot_actions, seed=seed, device=_torch_device(device))
    return EnvhubTorchRLEnv(made)


def _torch_device(given: Any) -> Any:
    """The torch device of ``given`` (``None``: the JAX device's), if this install has it (``checked_device``)."""
    if given is None:
        jax_device = jax.devices()[0]
        given = "cpu" if jax_device.platform == "cpu" else f"cuda:{jax_device.id}"
    try:
        device = None if isinstance(given, (bool, float)) else torch.device(given)
    except (RuntimeError, TypeError, ValueError):  # not a device torch knows ("gpu", "cuda:x", a list)
        device = None
    if device is not None and device.type == "cuda" and device.index is None:
        device = torch.device("cuda", 0)
    available = ["cpu", *(f"cuda:{i}" for i in range(torch.cuda.device_count()))]
    return checked_device("to_torchrl", given, device, available)


class _TorchRunner(Runner):
    """``compiled.Runner`` whose outputs stay on the device: the packed TimeStep as torch views (one DLPack call)."""

    def __init__(self, env: Any, seed: int, device: Any):
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
        buffer, alone = out  # the packed words, and the large narrow leaves beside them (``packing``)
        words = torch.utils.dlpack.from_dlpack(buffer).view(torch.int32)
        apart = [torch.utils.dlpack.from_dlpack(x) for x in alone]
        if words.device != self.device:
            words, apart = words.to(self.device), [x.to(self.device) for x in apart]
        return treedef.unflatten([read(words, apart) for read in readers])


def _torch_reader(leaf: Any) -> Any:
    """``(words, apart) -> tensor`` of one ``Packer`` leaf: a view where the dtype is 32-bit, a small copy otherwise,
    the leaf's own tensor where it travels apart."""
    start, stop, shape = leaf.start, leaf.start + leaf.words, leaf.shape
    if leaf.impl is not None or leaf.dtype not in DTYPES:  # keys and odd dtypes: never read by the export
        return lambda w, apart: None
    if leaf.alone is not None:  # a large narrow leaf, beside the words: its own tensor
        index = leaf.alone
        return lambda w, apart: apart[index]
    dtype = DTYPES[leaf.dtype]
    if leaf.dtype.itemsize == 4:
        return lambda w, apart: w[start:stop].view(dtype).view(shape)
    if leaf.dtype == np.bool_:
        return lambda w, apart: (w[start:stop] != 0).view(shape)
    if leaf.dtype.itemsize == 8:
        return lambda w, apart: w[start:stop].clone().view(dtype).view(shape)
    return lambda w, apart: w[start:stop].to(_SIGNED[leaf.dtype.itemsize]).view(dtype).view(shape)


class EnvhubTorchRLEnv(Exported, EnvBase):  # type: ignore[misc,unused-ignore]
    """A single-agent envhub env behind TorchRL's ``EnvBase``, made by ``to_torchrl`` (see the module docstring);
    ``.env`` is the envhub env."""

    def __init__(self, made: Made):
        env, one_hot = made.env, made.flags["one_hot_actions"]
        batch = () if env.num_envs is None else (env.num_envs,)
        obs_keys, obs_specs = keyed_specs(env.single_observation_space, env.id, "observation", batch, False)
        act_keys, act_specs = keyed_specs(env.single_action_space, env.id, "action", batch, one_hot)
        super().__init__(device=made.flags["device"], batch_size=torch.Size(batch))
        self.made, self.env, self.one_hot_actions = made, env, one_hot
        self._runner = _TorchRunner(env, made.flags["seed"], self.device)
        self._obs_keys = obs_keys
        act = env.single_action_space
        self._act_leaves = list(zip(act_keys, act.leaves if isinstance(act, spaces.Tree) else [act]))
        self.observation_spec = composite(obs_keys, obs_specs, batch)
        self.full_action_spec = composite(act_keys, act_specs, batch)
        self.reward_spec = rl.Unbounded(shape=(*batch, 1), dtype=torch.float32)
        flag = rl.Categorical(2, shape=(*batch, 1), dtype=torch.bool)
        self.full_done_spec = rl.Composite(done=flag, terminated=flag.clone(), truncated=flag.clone(), shape=batch)
        self._obs: Any = None  # the observation envhub's state is at (after an end: the next episode's first)
        self._ended: Any = None  # the envs whose episode the last step ended (their reset is already done)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        ts = self._runner.step(self._action(tensordict))
        reached = TARGET.final_obs(self.env.id, ts)
        terminated, truncated = ts.terminated.view(*self.batch_size, 1), ts.truncated.view(*self.batch_size, 1)
        self._obs, self._ended = jax.tree.leaves(ts.obs), ts.terminated | ts.truncated
        out = dict(zip(self._obs_keys, jax.tree.leaves(reached)))
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
            fresh = torch.ones(self.batch_size, dtype=torch.bool) if mask is None else self._mask(mask)
            if mask is not None and self._ended is not None:
                fresh = still_to_restart(fresh, self._ended.to(fresh.device))
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

    def _mask(self, mask: Any) -> Any:
        """The ``"_reset"`` mask as a bool tensor of ``batch_size`` (given so, or with a trailing 1, as done is)."""
        n, shape = max(self.batch_size.numel(), 1), tuple(self.batch_size)
        given = mask.detach().cpu().numpy() if isinstance(mask, torch.Tensor) else mask
        flags = checked_mask("reset(tensordict['_reset'])", given, n, (shape, (*shape, 1)), "mask.bool()")
        return torch.as_tensor(flags).reshape(self.batch_size)

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
            if counted(space):
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
        """TorchRL's close; the envhub env stays open, its maker's to close (a ``Collector`` calls this on finishing,
        and the export works again after it: ``envhub.interop.contract``)."""
        EnvBase.close(self, raise_if_closed=raise_if_closed)
        Exported.close(self)

    def __repr__(self) -> str:
        return f"EnvhubTorchRLEnv({self.env!r}, batch_size={self.batch_size}, device={self.device})"


__all__ = ["TARGET", "EnvhubTorchRLEnv", "to_torchrl", "to_torchrl_spec"]
