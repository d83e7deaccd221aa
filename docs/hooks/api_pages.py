"""mkdocs hook: the API reference, one page per public module of envhub, generated at build time.

The reference shows the user's surface, not envhub's internals: the modules of ``PAGES`` (``envhub``,
``envhub.plugin``, ``envhub.wrappers``, ``envhub.interop`` and its exports, ...). Each page opens with its
module's docstring and renders in full the names of its ``__all__`` that it is the home of; a name that
several pages export (``envhub.make`` and ``envhub.plugin.TimeStep`` ...) is rendered once, on the first page of
``HOMES`` exporting it, and the others link to it from a table. A module exported by name (``envhub.kwargs``,
``envhub.testing.toy_envs``) with no page of its own is a section of the page exporting it.

mkdocstrings reads the source (griffe, no import), so a page renders with or without the optional
dependency of its module; the hook imports the modules only to see which object each name is. A
module that cannot be imported here because an optional dependency is missing (``envhub.interop.gym_env``
without gymnasium, ``envhub.interop.sb3`` without stable-baselines3, ...) gets a note naming the extra
that installs it, and its reference is still read from the source: the build needs only the ``docs`` extra.

Signatures are formatted by black or ruff when either is installed (mkdocstrings' own choice); without
them, by ``format_def`` below (one parameter a line), so a long signature is never one cut-off line.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import importlib.metadata
import importlib.util
import inspect
import re
from types import ModuleType
from typing import Any

from mkdocs.structure.files import File, Files

SECTION = "API reference"

#: The reference pages, in the order of the nav: the user's surface.
PAGES = (
    "envhub",
    "envhub.spaces",
    "envhub.errors",
    "envhub.wrappers",
    "envhub.sharding",
    "envhub.tools",
    "envhub.interop",
    # the exports: each needs its library (an extra), imported only by this module
    "envhub.interop.gym_env",
    "envhub.interop.gym_vector",
    "envhub.interop.pettingzoo_parallel",
    "envhub.interop.pettingzoo_aec",
    "envhub.interop.gymnax_export",
    "envhub.interop.jaxmarl_export",
    "envhub.interop.torchrl_export",
    "envhub.interop.stoa_export",
    "envhub.interop.jumanji_export",
    "envhub.interop.sebulba",
    "envhub.interop.sb3",
    "envhub.testing",
    "envhub.plugin",
    "envhub.cli",
)

#: Where a name exported by several pages is rendered: the first of these pages exporting it.
HOMES = (
    "envhub.errors",
    "envhub.spaces",
    "envhub.wrappers",
    "envhub.sharding",
    "envhub.tools",
    "envhub.interop",
    "envhub.testing",
    "envhub.cli",
    "envhub",
    "envhub.plugin",
)

#: A page whose name is not where its source is: ``envhub.sharding`` is ``envhub.wrappers.sharding``.
SOURCES = {"envhub.sharding": "envhub.wrappers.sharding"}

#: Pages made of the modules inside a package with no ``__all__``: the package's docstring, then each module.
PARTS = {
    "envhub.tools": ("envhub.tools.rollout", "envhub.tools.render", "envhub.tools.bench"),
}

#: Extras that install everything or the tools of the repository: never the one to name for a single package.
_BROAD_EXTRAS = {"all", "dev", "test", "docs", "peers"}


def public_modules() -> list[str]:
    """The modules the API reference has a page for, in the order of the nav (those present in this envhub)."""
    return [page for page in PAGES if _exists(SOURCES.get(page, page))]


def _exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # a parent package that cannot be imported
        return False


def page_path(module: str) -> str:
    return f"reference/{module}.md"


# --- optional dependencies ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Missing:
    """An optional dependency a module needs and this environment lacks."""

    module: str
    package: str
    extra: str | None
    install: str

    def note(self) -> str:
        """The admonition opening the module's page."""
        title = f"Needs the {self.extra} extra" if self.extra else f"Needs {self.package}"
        return (
            f'!!! note "{title}"\n'
            f"    `{self.module}` imports `{self.package}`, which is not installed where this site was built;"
            f" install it with `{self.install}`. The reference below is read from the source.\n"
        )


def _extras() -> dict[str, set[str]]:
    """envhub's extras and the distributions each requires directly (normalized names)."""
    try:
        dist = importlib.metadata.distribution("envhub")
    except importlib.metadata.PackageNotFoundError:
        return {}
    extras: dict[str, set[str]] = {name: set() for name in dist.metadata.get_all("Provides-Extra") or []}
    for requirement in dist.requires or []:
        marker = re.search(r"""extra\s*==\s*["']([^"']+)["']""", requirement)
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        if marker and name and marker[1] in extras:
            extras[marker[1]].add(_normalize(name[0]))
    return extras


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _install_line(extra: str | None, package: str) -> str:
    if extra is None:
        return f"pip install {package}"
    try:
        from envhub.registry.plugin_api import compatible_core_range

        versions = compatible_core_range()  # with the range: never PyPI's unrelated envhub 1.x
    except Exception:  # noqa: BLE001 - an older core: the line without the range
        versions = ""
    return f'pip install "envhub[{extra}]{versions}"'


def extra_for(package: str) -> str | None:
    """The extra of envhub that installs ``package``: the one named after it, else one requiring it directly."""
    extras = _extras()
    wanted = _normalize(package)
    if wanted in extras:
        return wanted
    direct = sorted(name for name, requires in extras.items() if wanted in requires and name not in _BROAD_EXTRAS)
    return direct[0] if direct else None


def optional_dependency_missing(module: str) -> Missing | None:
    """What ``module`` (a page's name) needs that is not installed here (its import raises for a missing package), or None."""
    from envhub.errors import MissingDependencyError

    try:
        importlib.import_module(SOURCES.get(module, module))
    except MissingDependencyError as exc:  # envhub's own: it names the package and the install line
        extra = re.search(r"envhub\[([\w-]+)\]", exc.install_hint)
        return Missing(module, exc.package, extra[1] if extra else None, exc.install_hint)
    except ModuleNotFoundError as exc:  # a plain `import gymnasium` at the top of the module
        package = (exc.name or "").partition(".")[0]
        if not package or package == "envhub":
            raise
        extra = extra_for(package)
        return Missing(module, package, extra, _install_line(extra, package))
    return None


# --- what each page renders -----------------------------------------------------------------------


@dataclasses.dataclass
class Section:
    """One ``::: path`` block of a page: a module, the names it renders and those it links elsewhere."""

    page: str
    path: str  # the dotted path mkdocstrings renders (its identifiers start with it)
    exported: dict[str, Any] | None  # name -> object, in __all__ order; None: the module could not be imported
    level: int
    members: bool = True  # False: the module's docstring only


def _module(path: str) -> ModuleType | None:
    try:
        return importlib.import_module(SOURCES.get(path, path))
    except ImportError:
        return None


def _exported(module: ModuleType | None) -> dict[str, Any] | None:
    if module is None:
        return None
    return {name: getattr(module, name) for name in getattr(module, "__all__", ())}


def page_sections(page: str) -> list[Section]:
    """The sections of ``page``: the module itself, its parts (``PARTS``) or exported modules with no page."""
    module = _module(page)
    if page in PARTS:
        sections = [Section(page, page, {}, 1, members=False)]
        sections += [Section(page, part, _exported(_module(part)), 2) for part in PARTS[page] if _exists(part)]
        return sections
    if page == "envhub.cli":  # the command, then each of its subcommands' module: what it does
        sections = [Section(page, page, _exported(module), 1)]
        commands = getattr(module, "COMMANDS", {})
        sections += [Section(page, cmd.__name__, {}, 2, members=False) for cmd in commands.values()]
        return sections
    exported = _exported(module)
    sections = [Section(page, page, exported, 1)]
    for name, obj in (exported or {}).items():  # envhub.kwargs, envhub.testing.toy_envs: a section here
        if inspect.ismodule(obj) and _page_of_module(obj.__name__) is None:
            sections.append(Section(page, f"{page}.{name}", _exported(obj), 2))
    return sections


def static_all(module: str) -> list[str]:
    """The ``__all__`` of ``module`` read from its source, without importing it (its dependency may be missing)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return []
    with open(spec.origin, encoding="utf-8") as file:
        tree = ast.parse(file.read())
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                return list(ast.literal_eval(node.value))
    return []


def _page_of_module(name: str) -> str | None:
    for page in public_modules():
        if SOURCES.get(page, page) == name:
            return page
    return None


def _identifiable(obj: Any) -> bool:
    """Whether ``obj`` is one thing wherever it is exported (a class or function), not a value."""
    return inspect.isclass(obj) or inspect.isfunction(obj)


def homes() -> dict[int, str]:
    """id(object) -> the identifier it is rendered under: the first section of ``HOMES`` exporting it."""
    order = [page for page in HOMES if page in public_modules()]
    order += [page for page in public_modules() if page not in order]
    found: dict[int, str] = {}
    for page in order:
        for section in page_sections(page):
            for name, obj in (section.exported or {}).items():
                if _identifiable(obj) and section.members:
                    found.setdefault(id(obj), f"{section.path}.{name}")
    return found


@functools.cache
def _griffe_root() -> Any:
    """envhub as mkdocstrings reads it (griffe, from the source), or None without griffe."""
    try:
        import griffe
    except ImportError:
        return None
    return griffe.load("envhub", resolve_aliases=False, allow_inspection=False)


def renderable(path: str, name: str) -> bool:
    """Whether mkdocstrings can render ``path.name``: griffe finds its definition in the source.

    It cannot follow every assignment (``A, B = 0, 1``): such a name is listed in the page's table, with its value.
    """
    root = _griffe_root()
    if root is None:
        return True
    try:
        obj = root
        for part in path.split(".")[1:]:
            obj = obj[part]
        member = obj.members.get(name)
        if member is None:
            return False
        if member.is_alias:
            member.final_target  # noqa: B018 - raises when the alias leads nowhere griffe loaded
    except Exception:  # noqa: BLE001 - griffe's resolution errors, a missing member
        return False
    return True


def _summary(obj: Any) -> str:
    doc = inspect.getdoc(obj) if (inspect.ismodule(obj) or inspect.isclass(obj) or callable(obj)) else None
    line = " ".join((doc or "").strip().split("\n\n")[0].split())
    return line.replace("|", "\\|")


def _section_markdown(section: Section, found: dict[int, str], missing: Missing | None) -> str:
    lines = [f"::: {section.path}", "    options:", f"      heading_level: {section.level}"]
    if section.level > 1:
        lines.append("      show_root_full_path: true")
    if not section.members:
        lines.append("      members: false")
        return "\n".join(lines) + "\n"
    if section.exported is None:  # not importable here: its __all__, read from the source
        lines.append("      members: [" + ", ".join(static_all(section.path)) + "]")
        text = "\n".join(lines) + "\n"
        return (missing.note() + "\n" + text) if missing else text
    rendered, linked = [], []
    for name, obj in section.exported.items():
        if inspect.ismodule(obj):
            linked.append(name)
        elif _identifiable(obj) and found.get(id(obj)) != f"{section.path}.{name}":
            linked.append(name)
        elif not renderable(section.path, name):
            linked.append(name)  # a value griffe cannot see: its row gives it
        else:
            rendered.append(name)
    lines.append("      members: " + ("[" + ", ".join(rendered) + "]" if rendered else "false"))
    if section.level == 1:
        lines.append("      summary: true")
    text = "\n".join(lines) + "\n"
    if linked:
        table = [
            "",
            f"`{section.path}` also exports these names (a link leads to where each is documented):",
            "",
            "| name | what |",
            "|---|---|",
        ]
        for name in linked:
            obj = section.exported[name]
            if inspect.ismodule(obj):
                target = _page_of_module(obj.__name__)
                label = f"[`{name}`]({target}.md)" if target else f"[`{name}`][{section.path}.{name}]"
            elif _identifiable(obj) and id(obj) in found:
                label = f"[`{name}`][{found[id(obj)]}]"
            else:  # a value: shown here
                table.append(f"| `{name}` | `{obj!r}` |")
                continue
            table.append(f"| {label} | {_summary(obj)} |")
        text += "\n".join(table) + "\n"
    return text


def page_markdown(module: str, modules: list[str] | None = None) -> str:
    """The Markdown of ``module``'s reference page (a note first, when an extra it needs is missing)."""
    found = homes()
    missing = optional_dependency_missing(module)
    parts = []
    for section in page_sections(module):
        parts.append(_section_markdown(section, found, missing if section.path == module else None))
    return "\n".join(parts)


# --- signatures without black or ruff -------------------------------------------------------------


def format_def(code: str, line_length: int) -> str:
    """``def name(...) -> R: pass`` as black writes it when too long (the parameters on a line of their own, else
    one a line); other code unchanged.

    mkdocstrings formats a signature longer than ``line_length`` with black or ruff, and leaves it on one
    line without them; this is the fallback the hook installs then (the ``docs`` extra has neither).
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return code
    node = tree.body[0]
    args = node.args

    def one(arg: ast.arg, default: ast.expr | None, star: str = "") -> str:
        text = star + arg.arg + (f": {ast.unparse(arg.annotation)}" if arg.annotation is not None else "")
        if default is not None:
            text += f" = {ast.unparse(default)}" if arg.annotation is not None else f"={ast.unparse(default)}"
        return text

    positional = args.posonlyargs + args.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = [one(arg, default) for arg, default in zip(positional, defaults)]
    if args.posonlyargs:
        params.insert(len(args.posonlyargs), "/")
    if args.vararg is not None:
        params.append(one(args.vararg, None, "*"))
    elif args.kwonlyargs:
        params.append("*")
    params += [one(arg, default) for arg, default in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg is not None:
        params.append(one(args.kwarg, None, "**"))
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    head = "async def " if isinstance(node, ast.AsyncFunctionDef) else "def "
    one_line = f"{head}{node.name}({', '.join(params)}){returns}:"
    if len(one_line) <= line_length or not params:
        return one_line + "\n    pass\n"
    hanging = "    " + ", ".join(params)
    if len(hanging) <= line_length:  # the parameters fit on one line of their own
        return f"{head}{node.name}(\n{hanging}\n){returns}:\n    pass\n"
    body = "".join(f"    {param},\n" for param in params)
    return f"{head}{node.name}(\n{body}){returns}:\n    pass\n"


def _install_signature_formatter() -> None:
    """Use ``format_def`` where mkdocstrings finds neither black nor ruff (its private API: skipped if it moved)."""
    try:
        from mkdocstrings_handlers.python._internal import rendering
    except ImportError:
        return
    finders = ("_get_black_formatter", "_get_ruff_formatter", "_get_formatter")
    if not all(hasattr(rendering, name) for name in finders):
        return
    if rendering._get_black_formatter() is not None or rendering._get_ruff_formatter() is not None:
        return
    rendering._get_formatter = lambda: format_def


# --- the mkdocs events ----------------------------------------------------------------------------


def on_config(config: Any) -> Any:
    _install_signature_formatter()
    pages = [{module: page_path(module)} for module in public_modules()]
    for entry in config["nav"]:
        if isinstance(entry, dict) and SECTION in entry:
            entry[SECTION] = pages
    return config


def on_files(files: Files, config: Any) -> Files:
    for module in public_modules():
        files.append(File.generated(config, page_path(module), content=page_markdown(module)))
    return files
