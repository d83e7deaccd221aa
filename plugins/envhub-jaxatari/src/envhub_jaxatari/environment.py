"""``JaxAtariEnvironment``: a JAXAtari (``jaxtari``) game behind the envhub API."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import os
import warnings
from collections.abc import Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import envhub
from envhub.plugin import EnvUnavailableError, InvalidArgumentError, JaxStep, draw_each, spaces

#: The observations ``obs_type`` picks: jaxtari's object-centric observation (default), or the rendered frame.
OBS_TYPES = ("objects", "pixels")

#: Games whose ``done`` includes a time limit of their own (a constant of the game): the plugin turns it off and
#: puts it on envhub's ``max_episode_steps`` instead (same default), so it is reported as truncation.
GAME_TIME_LIMITS: dict[str, tuple[str, int]] = {"skiing": ("max_steps", 5 * 60 * 60), "surround": ("MAX_STEPS", 1000)}

#: What the plugin sets those constants to: a limit no episode reaches (int32 step counters).
NO_LIMIT = 2**31 - 1

#: jaxtari's switch (README) that turns off its console question about a newer sprite pack.
SKIP_UPDATE = "JAXTARI_SKIP_SPRITE_UPDATE"


def sprites_hint() -> str:
    """How to install jaxtari's sprite pack, which every game loads when it is built, naming the folder it goes to
    (jaxtari's: ``platformdirs.user_data_dir("jaxtari")``, i.e. ``$XDG_DATA_HOME/jaxtari`` where that is set)."""
    from jaxtari.paths import canonical_storage_dir

    return (
        "run jaxtari's installer once, `install-sprites` (or `python -m jaxtari.install_sprites`), which downloads "
        "the sprite pack (original sprites if you confirm you own the Atari 2600 ROMs, else replacement sprites) "
        f"into {canonical_storage_dir()}"
    )


class JaxAtariEnvironment(envhub.JaxEnvironment[Any, Any, Any]):
    """One JAXAtari game on envhub's JAX base: jaxtari's ``reset(key)`` and ``step(state, action)`` (no
    auto-reset: the base resets in the same step). ``obs_type="objects"`` (default) gives jaxtari's
    object-centric observation as a dict tree (each object's ``x``, ``y``, ``width``, ``height``, ``active``, ...);
    ``obs_type="pixels"`` gives the frame jaxtari draws, uint8 ``(210, 160, 3)``. jaxtari's ``done`` is
    ``terminated``; a time limit (``max_episode_steps``; skiing's 5 minutes and surround's 1000 steps by
    default) truncates. ``render`` draws the frame with jaxtari's renderer.
    """

    render_modes = ("rgb_array",)

    def __init__(
        self,
        name: str,
        *,
        num_envs: int | None = None,
        max_episode_steps: int | None = None,
        reset_mode: str = "real",
        reset_spares: bool | None = None,
        obs_type: str = "objects",
        **kwargs: Any,
    ):
        if obs_type not in OBS_TYPES:
            raise InvalidArgumentError(f"obs_type={obs_type!r}: use one of {OBS_TYPES}.")
        self.name, self.obs_type = name, obs_type
        self.game = build_game(name, **kwargs)
        _, obs = jax.eval_shape(self._reset_one, jax.random.key(0))
        if obs_type == "pixels":
            observation_space: spaces.Space = spaces.Box(0, 255, obs.shape, np.uint8)
        else:
            observation_space = spaces.Tree(jax.tree.map(_widest_box, obs))
        if max_episode_steps is None and name in GAME_TIME_LIMITS:
            max_episode_steps = GAME_TIME_LIMITS[name][1]
        super().__init__(
            observation_space=observation_space,
            action_space=spaces.Discrete(int(self.game.action_space().n), dtype=np.int32),
            num_envs=num_envs,
            max_episode_steps=max_episode_steps,
            reset_mode=reset_mode,
            reset_spares=reset_spares,
        )

    @property
    def metadata(self) -> dict[str, Any]:
        return {**super().metadata, "library": f"jaxtari {importlib.metadata.version('jaxtari')} ({self.name})"}

    def _render(self, state: Any, index: int | None) -> Any:
        draw = self.__dict__.setdefault("_draw", jax.jit(self.game.render))
        return draw_each(lambda one: np.asarray(draw(one), np.uint8), jax.device_get(state.env), self.num_envs, index)

    def _reset_one(self, key: jax.Array) -> tuple[Any, Any]:
        obs, state = self.game.reset(raw_key(key))
        return state, self._observe(obs, state)

    def _step_one(self, key: jax.Array, state: Any, action: Any) -> JaxStep:
        # jaxtari's games keep their randomness in the state (drawn from the reset key): the step key is unused.
        obs, state, reward, done, _info = self.game.step(state, action)
        return JaxStep(
            state=state,
            obs=self._observe(obs, state),
            reward=jnp.asarray(reward, jnp.float32),
            terminated=jnp.asarray(done, jnp.bool_),
            truncated=jnp.zeros((), jnp.bool_),
            info={},
        )

    def _observe(self, obs: Any, state: Any) -> Any:
        return as_tree(obs) if self.obs_type == "objects" else jnp.asarray(self.game.render(state), jnp.uint8)


def raw_key(key: jax.Array) -> jax.Array:
    """``key`` as jaxtari's games take it: a raw uint32 key (``jax.random.PRNGKey``'s). Some mix the key kept in
    their state with raw keys they make (journeyescape, lasergates: a typed key fails their ``lax.cond``)."""
    return jax.random.key_data(key) if jnp.issubdtype(key.dtype, jax.dtypes.prng_key) else key


def build_game(name: str, **kwargs: Any) -> Any:
    """jaxtari's game ``name`` as ``jaxtari.make(name, **kwargs)`` builds it, with its own time limit (if any) off.

    Raises:
        EnvUnavailableError: jaxtari's sprite pack is not installed (every game loads it when built).
    """
    import jaxtari
    from jaxtari.paths import ownership_or_alt_markers_present

    if not ownership_or_alt_markers_present():  # jaxtari.make's own check, without its console banner
        raise EnvUnavailableError(f"jaxatari/{name}", f"jaxtari's sprite pack is not installed; {sprites_hint()}")
    _warn_if_old_pack(name)
    try:
        with _no_sprite_update_question():
            game = jaxtari.make(name, **kwargs)
    except FileNotFoundError as exc:  # a pack without this game's sprites
        raise EnvUnavailableError(
            f"jaxatari/{name}", f"a sprite of the game is missing ({exc}); {sprites_hint()}"
        ) from exc
    if name in GAME_TIME_LIMITS:
        field = GAME_TIME_LIMITS[name][0]
        game = _rebuilt(name, game, game.consts.replace(**{field: NO_LIMIT}), kwargs)
    return game


@contextlib.contextmanager
def _no_sprite_update_question() -> Iterator[None]:
    """Inside, jaxtari.make never asks on the console. Where the installed sprite pack is older than jaxtari wants,
    jaxtari.make asks whether to download the new one (``input()``): make waited forever on a silent stdin, failed
    with EOFError on a closed one, and a yes downloads and ``sys.exit(1)``s offline. ``JAXTARI_SKIP_SPRITE_UPDATE=1``
    is jaxtari's switch for that: set only around the call and restored after (``_warn_if_old_pack`` says instead)."""
    before = os.environ.get(SKIP_UPDATE)
    os.environ[SKIP_UPDATE] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SKIP_UPDATE, None)
        else:
            os.environ[SKIP_UPDATE] = before


def _warn_if_old_pack(name: str) -> None:
    """Warn where jaxtari would have asked to update the sprite pack (unless the user turned that off or declined)."""
    from jaxtari.paths import (
        REQUIRED_SPRITE_VERSION,
        declined_update_for_required_version,
        env_flag,
        get_storage_dir,
        read_installed_sprite_version,
        sprite_update_needed,
    )

    storage = get_storage_dir()
    if env_flag(SKIP_UPDATE) or not sprite_update_needed(storage) or declined_update_for_required_version(storage):
        return
    installed = read_installed_sprite_version(storage)
    version = "unknown" if installed is None else installed
    warnings.warn(
        f"jaxatari/{name}: jaxtari's sprite pack in {storage} is version {version}, older than the "
        f"{REQUIRED_SPRITE_VERSION} this jaxtari wants; envhub builds the game with it (make never asks on the "
        f"console or downloads). To update it, {sprites_hint()}; set {SKIP_UPDATE}=1 to silence this.",
        UserWarning,
        stacklevel=2,
    )


def _rebuilt(name: str, game: Any, consts: Any, kwargs: dict[str, Any]) -> Any:
    """``game`` built again with ``consts`` (and its mods, the way ``jaxtari.make`` applies them)."""
    from jaxtari.core import MOD_MODULES, apply_modifications

    mods = kwargs.get("mods")
    if not mods:
        return type(game)(consts=consts)
    base = type(getattr(game, "_env", game))
    return apply_modifications(
        game_name=name,
        mods_config=mods,
        allow_conflicts=kwargs.get("allow_conflicts", False),
        base_consts=consts,
        env_class=base,
        MOD_MODULES=MOD_MODULES,
    )


def as_tree(obs: Any) -> Any:
    """jaxtari's observation (flax dataclasses, ``ObjectObservation`` per object) as nested dicts of arrays."""
    if dataclasses.is_dataclass(obs) and not isinstance(obs, type):
        return {f.name: as_tree(getattr(obs, f.name)) for f in dataclasses.fields(obs)}
    if isinstance(obs, dict):
        return {k: as_tree(v) for k, v in obs.items()}
    return jnp.asarray(obs)


def _widest_box(leaf: Any) -> spaces.Box:
    """The Box of everything ``leaf``'s dtype holds (jaxtari's declared spaces differ from the arrays its games return)."""
    dtype = np.dtype(leaf.dtype)
    if dtype.kind == "b":
        low, high = False, True
    elif dtype.kind in "iu":
        low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
    else:
        low, high = -np.inf, np.inf
    return spaces.Box(low, high, leaf.shape, dtype)
