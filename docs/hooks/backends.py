"""mkdocs hook: the table of installed backends, read from envhub's registry at build time.

``docs/backends.md`` holds the line ``<!-- backends-table -->``; this hook replaces it with one row
per backend ``envhub.list_backends()`` finds (so a plugin installed later appears with no edit).
Each row makes the backend's first available environment (no ``init``: nothing is stepped) to read
where it runs, what batches it and its render modes.
"""

from __future__ import annotations

import inspect
from typing import Any

MARKER = "<!-- backends-table -->"
HEADER = [
    "| prefix | distribution | envs (runnable / listed) | batched by (`num_envs=2`) | runs on | render modes | example env |",
    "|---|---|---:|---|---|---|---|",
]


def _first_line(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split()).replace("|", "\\|")


def _describe(env_id: str) -> tuple[str, str, str]:
    """(batched by, runs on, render modes) of ``env_id``, from a batch of two made and closed at once."""
    import envhub

    with envhub.make(env_id, num_envs=2) as env:
        batched = env.unwrapped if env.unwrapped is not env else env
        if type(env).__name__ == "VmapEnvironment":
            engine = "`jax.vmap`, by envhub (`VmapEnvironment`)"
        else:
            engine = f"`{type(batched).__name__}`: {_first_line(type(batched))}"
        runs_on = "device (pure JAX)" if env.is_jax_native else "host (CPU)"
        modes = ", ".join(f"`{mode}`" for mode in env.render_modes) or "none"
    return engine, runs_on, modes


def backends_table() -> str:
    """The Markdown table of every installed backend."""
    import envhub

    rows = list(HEADER)
    for backend in envhub.list_backends():
        dist = f"`{backend.distribution}` {backend.version}"
        if backend.status != "ok":
            rows.append(f"| `{backend.prefix}` | {dist} | - | - | - | - | {backend.status}: {backend.reason} |")
            continue
        specs = envhub.list_envs(backend.prefix)
        runnable = [spec for spec in specs if spec.available]
        if not runnable:
            rows.append(f"| `{backend.prefix}` | {dist} | 0 / {len(specs)} | - | - | - | - |")
            continue
        try:
            engine, runs_on, modes = _describe(runnable[0].id)
        except envhub.errors.EnvhubError as exc:  # a broken plugin must not break the site: show why
            engine, runs_on, modes = f"could not make it: {envhub.errors.one_line(exc)}".replace("|", "\\|"), "-", "-"
        count = f"{len(runnable)} / {len(specs)}"
        rows.append(f"| `{backend.prefix}` | {dist} | {count} | {engine} | {runs_on} | {modes} | `{runnable[0].id}` |")
    if len(rows) == len(HEADER):
        return "No backend plugin is installed where these docs were built (`envhub list` shows none)."
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, backends_table())
    return markdown
