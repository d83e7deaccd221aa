"""Which games octax has, and importing octax (``import_octax`` works around its GUI-only imports).

octax keeps no registry of its games: each is a module of ``octax.environments`` (its ROM file, score,
end and keys), and a module without a ROM of its own is a family of levels, one ROM ``<module><n>.ch8``
each, which ``octax.environments.create_environment("<module><n>")`` builds.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
import sys
import types
from pathlib import Path
from typing import Any

# Modules octax imports at its top only for its video and window helpers (octax.rendering), which the plugin
# does not use; octax 0.1.1 lists them in its "gui" extra only.
GUI_ONLY = {"cv2": "opencv-python", "PIL": "pillow"}
_ABSENT = object()


def import_octax() -> types.ModuleType:
    """``import octax``, also where its GUI-only modules are not installed.

    octax 0.1.1's ``__init__`` imports ``octax.rendering``, which imports cv2 and PIL at its top, yet octax
    requires them only with its ``gui`` extra: without them ``import octax`` fails. Workaround: a stand-in
    for each missing one during this import only (removed after; the real import still fails elsewhere),
    which raises ``ModuleNotFoundError`` naming the package if octax's video helpers ever use it.
    """
    if "octax" in sys.modules:
        return sys.modules["octax"]
    saved: dict[str, Any] = {}
    try:
        while True:
            try:
                return importlib.import_module("octax")
            except ModuleNotFoundError as exc:
                if exc.name not in GUI_ONLY or exc.name in saved:
                    raise
                saved[exc.name] = sys.modules.get(exc.name, _ABSENT)
                sys.modules[exc.name] = _StandIn(exc.name)
    finally:
        for name, before in saved.items():
            if before is _ABSENT:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = before


class _StandIn(types.ModuleType):
    """A module octax imports but the plugin never uses: any attribute but ``Image`` (PIL's) raises."""

    def __init__(self, name: str):
        super().__init__(name)
        if name == "PIL":
            self.Image = _StandIn("PIL.Image")

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # the import system's questions (__path__, __file__, ...)
            raise AttributeError(attr)
        top = self.__name__.split(".")[0]
        raise ModuleNotFoundError(
            f"octax's {self.__name__}.{attr} needs {top}, which is not installed: pip install {GUI_ONLY[top]}",
            name=top,
        )


@functools.cache
def game_names() -> tuple[str, ...]:
    """Every name ``create_environment`` builds: the game modules with a ROM, and the levels of the others."""
    import_octax()
    import octax.environments as games

    roms = sorted(p.name for p in rom_dir().glob("*.ch8"))
    names = []
    for module in pkgutil.iter_modules(games.__path__):
        levels = [m.group(1) for r in roms if (m := re.fullmatch(rf"{module.name}(\d+)\.ch8", r))]
        # A module's own rom_file is no test: create_environment sets it on a level module it builds.
        names += [f"{module.name}{n}" for n in sorted(levels, key=int)] if levels else [module.name]
    return tuple(names)


@functools.cache
def unlisted_levels() -> dict[str, str]:
    """Level ROMs octax ships that ``create_environment`` cannot name (no number at the end): name -> reason."""
    listed = set(game_names())
    families = {re.sub(r"\d+$", "", n) for n in listed if n[-1].isdigit()}
    out = {}
    for rom in sorted(p.stem for p in rom_dir().glob("*.ch8")):
        family = next((f for f in families if re.fullmatch(rf"{f}\d+[a-z]+", rom)), None)
        if family is not None and rom not in listed:
            out[rom] = (
                f"octax {_version()} ships its ROM {rom}.ch8, but its create_environment cannot build it (level ids "
                f"must end in a number: {rom!r} would import a module octax.environments.{rom}); use "
                f"octax/{family}1 ... or build octax.env.OctaxEnv from octax.environments.{family} yourself"
            )
    return out


@functools.cache
def rom_dir() -> Path:
    """The ``roms`` folder octax installs: the first above ``octax/environments``, as its ``get_rom_path`` finds it."""
    import_octax()
    import octax.environments as games

    for folder in Path(games.__file__).resolve().parents:
        if (folder / "roms").is_dir():
            return folder / "roms"
    raise FileNotFoundError(f"octax's ROM folder 'roms' is not above {games.__file__}: reinstall octax")


def _version() -> str:
    import importlib.metadata

    return importlib.metadata.version("octax")
