"""``envhub new-plugin NAME [--dir DIR]``: write a working backend plugin to start from.

The files come from ``envhub/cli/plugin_template/``, shipped in the core wheel: the one home of the
plugin template. In a file's text ``{{name}}``, ``{{version}}`` and ``{{envhub_range}}`` are filled in;
in a path, ``NAME`` becomes the name, a leading ``dot_`` a ``.`` (``.github``), and ``.tmpl`` is dropped.
The repository's ``plugins/_template`` is this command's output for ``mybackend``
(``tests/test_template_plugin.py`` checks that they are identical).
"""

from __future__ import annotations

import argparse
import re
import shlex
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envhub.cli.common import EXIT_OK, writable_folder

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable  # Python 3.11+; only annotations name it

NAME = "new-plugin"
#: The rule for NAME: a lowercase identifier, usable as a prefix, a distribution and a package name.
NAME_RULE = re.compile(r"[a-z][a-z0-9_]*")
_PLACEHOLDER = re.compile(r"\{\{([a-z_]+)\}\}")


def add_arguments(sub: Any) -> argparse.ArgumentParser:
    """Add the ``envhub new-plugin`` parser to ``sub`` (argparse subparsers)."""
    p = sub.add_parser(
        NAME,
        help="write a backend plugin to start from: package, tests, CI, checklist",
        description="Write envhub-NAME: a working plugin with one JAX environment, NAME/Chain-v0, its "
        "conformance tests, a CI workflow and a checklist for publishing. It passes its own tests as written.",
    )
    p.add_argument(
        "name",
        metavar="NAME",
        help="the prefix of the plugin's environment ids (NAME/Chain-v0), a lowercase identifier such as "
        "mybackend; the distribution is envhub-NAME, the package envhub_NAME",
    )
    p.add_argument(
        "--dir", type=Path, default=None, help="the folder to create (default: ./envhub-NAME); never overwritten"
    )
    return p


def run(args: argparse.Namespace) -> int:
    directory = args.dir if args.dir is not None else Path(f"envhub-{args.name}")
    written = create(args.name, directory)
    name, where = args.name, shlex.quote(str(directory))
    print(f"Wrote the envhub plugin envhub-{name} to {directory}/ ({len(written)} files):")
    for path in written:
        print(f"  {path.relative_to(directory).as_posix()}")
    steps = [
        (f"cd {where}", ""),
        ("python -m pip install -e . pytest twine build", "the plugin, editable, next to envhub"),
        ("envhub list", f"{name}  envhub-{name}  0.1.0  1  ok"),
        (f"envhub check {name}/Chain-v0 -n 4", "the conformance kit"),
        ("python -m pytest", "the same kit, as tests"),
    ]
    width = max(len(command) for command, _ in steps)
    print("\nNext steps, in the environment envhub runs in:")
    for command, comment in steps:
        print(f"  {command.ljust(width)}   # {comment}" if comment else f"  {command}")
    print(
        f"Then put your environment in src/envhub_{name}/chain.py (or a module of its own), and go through\n"
        f"README.md's checklist before publishing: tests, build, twine check --strict, version, envhub range,\n"
        f"ENVHUB_API, and a row on envhub's third-party plugins page."
    )
    return EXIT_OK


def create(name: str, directory: Path | str, *, version: str = "0.1.0") -> list[Path]:
    """Write the plugin ``envhub-<name>`` into the new folder ``directory``; return the files written.

    Raises:
        InvalidArgumentError: ``name`` breaks the rule, ``directory`` exists already, or is under a file or in a
            folder that cannot be written.
    """
    from envhub.errors import InvalidArgumentError

    check_name(name)
    directory = Path(directory)
    if directory.exists():
        raise InvalidArgumentError(
            f"{str(directory)!r} already exists; envhub new-plugin writes a new folder and never overwrites "
            f"one: pass another --dir, or move {str(directory)!r} away."
        )
    ancestor = next(p for p in (directory, *directory.parents, Path(".")) if p.exists())
    shown = f"--dir {str(directory)!r}"
    if not ancestor.is_dir():
        raise InvalidArgumentError(f"{shown}: {str(ancestor)!r} is a file, not a folder; pick a path in a folder.")
    writable_folder(ancestor, shown)
    files = render(name, version=version)
    written = []
    try:
        directory.mkdir(parents=True)
        for relative, text in files.items():
            path = directory / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
            written.append(path)
    except OSError as exc:
        raise InvalidArgumentError(
            f"{shown}: writing {str(exc.filename or directory)!r} failed ({exc.strerror or exc}) after "
            f"{len(written)} of {len(files)} files; free the space or pick another --dir, and delete "
            f"{str(directory)!r} first."
        ) from None
    return written


def render(name: str, *, version: str = "0.1.0") -> dict[str, str]:
    """The plugin's files for ``name``: relative POSIX path to text, sorted by path."""
    from envhub.registry.plugin_api import compatible_core_range

    values = {"name": check_name(name), "version": version, "envhub_range": compatible_core_range()}
    out: dict[str, str] = {}
    for parts, source in _sources(resources.files("envhub.cli").joinpath("plugin_template"), ()):
        path = "/".join(_path_part(p, name) for p in parts)
        out[path] = _PLACEHOLDER.sub(lambda m: values[m.group(1)], source.read_text(encoding="utf-8"))
    return dict(sorted(out.items()))


def check_name(name: str) -> str:
    """``name`` if it is a lowercase identifier usable as a backend prefix; ``InvalidArgumentError`` if not."""
    from envhub.errors import InvalidArgumentError
    from envhub.registry.plugin_api import IN_REPO_BACKENDS

    text = str(name)
    bare = re.sub(r"^envhub[-_]", "", text)
    if not NAME_RULE.fullmatch(text) or bare != text:
        guess = re.sub(r"[^a-z0-9_]+", "_", bare.lower()).strip("_")
        guess = guess if re.match(r"[a-z]", guess) else f"my{guess or 'backend'}"
        raise InvalidArgumentError(
            f"Plugin name {name!r} is not a lowercase identifier usable as a backend prefix: it must be a "
            f"lowercase letter, then lowercase letters, digits or '_', without 'envhub' in front (NAME becomes "
            f"the prefix NAME/Chain-v0, the distribution envhub-NAME and the package envhub_NAME); try {guess!r}."
        )
    if text in IN_REPO_BACKENDS:
        raise InvalidArgumentError(
            f"Plugin name {name!r} is the prefix of envhub's own plugin envhub-{text}, and two distributions "
            f"claiming one prefix is an error; pick another name, e.g. {text + '_ext'!r}."
        )
    return text


def _sources(node: Traversable, parts: tuple[str, ...]) -> list[tuple[tuple[str, ...], Traversable]]:
    """Every ``.tmpl`` file under ``node`` with its path parts."""
    found = []
    for child in node.iterdir():
        if child.is_dir() and child.name != "__pycache__":
            found += _sources(child, (*parts, child.name))
        elif child.name.endswith(".tmpl"):
            found.append(((*parts, child.name), child))
    return found


def _path_part(part: str, name: str) -> str:
    part = part.removesuffix(".tmpl").replace("NAME", name)
    return "." + part.removeprefix("dot_") if part.startswith("dot_") else part


__all__ = ["NAME", "NAME_RULE", "add_arguments", "check_name", "create", "render", "run"]
