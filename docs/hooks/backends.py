"""mkdocs hook: every list of backends in the docs, generated at build time (none is written by hand).

Two sources, two kinds of marker, each an HTML comment a page holds on a line (or in a sentence) of its own:

- the plugins installed where the site is built, read from envhub's registry: ``<!-- backends-table -->``
  (``docs/backends.md``) becomes one row per backend ``envhub.list_backends()`` finds (so a plugin installed
  later appears with no edit). Each row makes the backend's first available environment (no ``init``:
  nothing is stepped) to read where it runs, what batches it and its render modes; a reason too long for a
  cell (a plugin that fails to load) is listed under the table.
- the in-repo plugins, read from ``plugins/envhub-*/`` (their ``pyproject.toml`` and source, nothing
  imported), so the pages say the same whatever is installed: ``<!-- backends:names -->`` (the prefixes,
  as a sentence's list), ``<!-- backends:count -->``, ``<!-- backends:in-repo -->`` (a table: prefix,
  extra, what it offers), ``<!-- backends:envhub-list -->`` (what ``envhub list`` prints with all of them
  installed) and ``<!-- backends:batching=native -->`` / ``=vmap`` (those registering that batching mode).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

MARKER = "<!-- backends-table -->"
HEADER = [
    "| prefix | distribution | envs (runnable / listed) | batched by (`num_envs=2`) | runs on | render modes | example env |",
    "|---|---|---:|---|---|---|---|",
]
PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
IN_REPO_MARKER = re.compile(r"<!-- backends:([\w-]+)(?:=(\w+))? -->")


# --- the installed backends, from the registry ----------------------------------------------------


def _describe(env_id: str) -> tuple[str, str, str]:
    """(batched by, runs on, render modes) of ``env_id``, from a batch of two made and closed at once."""
    import envhub

    with envhub.make(env_id, num_envs=2) as env:
        batched = env.unwrapped if env.unwrapped is not env else env
        if type(env).__name__ == "VmapEnvironment":
            engine = "`VmapEnvironment` (envhub's `jax.vmap`)"
        else:
            engine = f"`{type(batched).__name__}`"
        runs_on = "device (pure JAX)" if env.is_jax_native else "host (CPU)"
        modes = ", ".join(f"`{mode}`" for mode in env.render_modes) or "none"
    return engine, runs_on, modes


def backends_table() -> str:
    """The Markdown table of every installed backend; what does not fit a cell is listed under it."""
    import envhub

    rows, notes = list(HEADER), []
    for backend in envhub.list_backends():
        dist = f"`{backend.distribution}` {backend.version}"
        if backend.status != "ok":
            rows.append(f"| `{backend.prefix}` | {dist} | - | - | - | - | {backend.status} *(below)* |")
            notes.append(f"- `{backend.prefix}`: {backend.status}: {backend.reason}")
            continue
        specs = envhub.list_envs(backend.prefix)
        runnable = [spec for spec in specs if spec.available]
        if not runnable:
            rows.append(f"| `{backend.prefix}` | {dist} | 0 / {len(specs)} | - | - | - | - |")
            continue
        try:
            engine, runs_on, modes = _describe(runnable[0].id)
        except envhub.errors.EnvhubError as exc:  # a broken plugin must not break the site: say why, below
            engine, runs_on, modes = "could not make it *(below)*", "-", "-"
            notes.append(f"- `{runnable[0].id}`: {envhub.errors.one_line(exc)}")
        count = f"{len(runnable)} / {len(specs)}"
        rows.append(f"| `{backend.prefix}` | {dist} | {count} | {engine} | {runs_on} | {modes} | `{runnable[0].id}` |")
    if len(rows) == len(HEADER):
        return "No backend plugin is installed where these docs were built (`envhub list` shows none)."
    return "\n".join(rows) + ("\n\nThe rows marked *(below)*:\n\n" + "\n".join(notes) if notes else "")


# --- the in-repo plugins, from plugins/ -----------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class InRepo:
    """One in-repo plugin, as its folder declares it."""

    prefix: str
    distribution: str
    version: str
    description: str
    requires_python: str
    api: str
    batching: tuple[str, ...]  # the batching modes its source registers (envhub's default: "vmap")

    @property
    def folder(self) -> str:
        return f"plugins/{self.distribution}"


def _project(text: str) -> dict[str, Any]:
    """The fields of a plugin's ``pyproject.toml`` this hook reads (tomllib where there is one)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the few single-line fields, by pattern
        fields = {k: re.search(rf'^{k}\s*=\s*"([^"]*)"', text, re.M) for k in ("name", "version", "description")}
        requires = re.search(r'^requires-python\s*=\s*"([^"]*)"', text, re.M)
        section = text.partition('[project.entry-points."envhub.backends"]')[2]
        entry = re.search(r"^\s*([\w-]+)\s*=", section, re.M)
        project = {k: m[1] for k, m in fields.items() if m}
        project["requires-python"] = requires[1] if requires else ""
        project["entry-points"] = {"envhub.backends": {entry[1]: ""} if entry else {}}
        return project
    return tomllib.loads(text)["project"]


def in_repo_plugins(root: Path = PLUGINS) -> list[InRepo]:
    """Every plugin under ``plugins/`` (not the template), sorted by prefix as ``envhub list`` sorts."""
    found = []
    for pyproject in sorted(root.glob("envhub-*/pyproject.toml")):
        project = _project(pyproject.read_text(encoding="utf-8"))
        for prefix in project.get("entry-points", {}).get("envhub.backends", {}):
            source = "\n".join(p.read_text(encoding="utf-8") for p in sorted(pyproject.parent.glob("src/*/*.py")))
            api = re.search(r"^ENVHUB_API\s*=\s*(\d+)", source, re.M)
            modes = tuple(sorted(set(re.findall(r"""batching\s*=\s*["'](\w+)["']""", source)))) or ("vmap",)
            description = re.sub(r"^envhub backend plugin for\s+", "", project.get("description", ""))
            found.append(
                InRepo(
                    prefix=prefix.lower(),
                    distribution=project["name"],
                    version=project.get("version", ""),
                    description=description,
                    requires_python=project.get("requires-python", ""),
                    api=api[1] if api else "-",
                    batching=modes,
                )
            )
    return sorted(found, key=lambda plugin: plugin.prefix)


def _names(plugins: list[InRepo]) -> str:
    return ", ".join(f"`{plugin.prefix}`" for plugin in plugins)


def _python_note(plugin: InRepo) -> str:
    floor = re.search(r">=\s*3\.(\d+)", plugin.requires_python)
    return f", Python 3.{floor[1]}+" if floor and int(floor[1]) > 10 else ""  # the core's own floor is 3.10


def in_repo_table(plugins: list[InRepo]) -> str:
    rows = ["| prefix | install | what it offers |", "|---|---|---|"]
    for plugin in plugins:
        rows.append(f"| `{plugin.prefix}` | `.[{plugin.prefix}]`{_python_note(plugin)} | {plugin.description} |")
    return "\n".join(rows)


def envhub_list_output(plugins: list[InRepo]) -> str:
    """What ``envhub list`` prints with every in-repo plugin installed, as a fenced block (its column layout)."""
    header = ["PREFIX", "DISTRIBUTION", "VERSION", "API", "STATUS"]
    rows = [[p.prefix, p.distribution, p.version, p.api, "ok"] for p in plugins]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "```\n" + "\n".join(lines) + "\n```"


def _in_repo(match: re.Match[str], plugins: list[InRepo]) -> str:
    kind, value = match[1], match[2]
    if kind == "names":
        return _names(plugins)
    if kind == "count":
        return str(len(plugins))
    if kind == "in-repo":
        return in_repo_table(plugins)
    if kind == "envhub-list":
        return envhub_list_output(plugins)
    if kind == "batching" and value:
        chosen = [plugin for plugin in plugins if value in plugin.batching]
        return _names(chosen) if chosen else "none of the in-repo backends"
    raise ValueError(f"unknown backends marker {match[0]!r} (docs/hooks/backends.py lists the markers)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, backends_table())
    if IN_REPO_MARKER.search(markdown):
        plugins = in_repo_plugins()
        markdown = IN_REPO_MARKER.sub(lambda match: _in_repo(match, plugins), markdown)
    return markdown
