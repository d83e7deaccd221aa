"""Run the Python code blocks of README.md and docs/ as tests (a pytest plugin, loaded by the root conftest).

Each ```` ```python ```` block of a Markdown file is one test; the blocks of a file run in order in
one shared namespace, as a reader would paste them into one session (``--dist loadscope`` keeps a
file on one worker). An HTML comment on the line before a block, invisible on GitHub and in the
site, says what the block needs:

- ``<!-- test: requires=gymnasium -->``: needs that in-repo plugin (comma-separated for more); the
  block is SKIPPED with the install line where it is missing. A block that names an in-repo
  backend (``"brax/ant"``, ``import envhub_brax``) without requiring it fails, so the marks stay true.
- ``<!-- test: imports=stoa -->``: needs that Python module, from no in-repo plugin (an export's library, e.g.
  ``envhub[stoa]``'s; comma-separated for more); SKIPPED, naming it, where it cannot be imported.
- ``<!-- test: skip=why -->``: illustrative only (a fragment, a placeholder); SKIPPED with ``why``.
  Keep these rare.
"""

from __future__ import annotations

import re
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = ("README.md",)  # plus every .md under docs/
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<info>[^\s`]*)")
DIRECTIVE = re.compile(r"^\s*<!--\s*test:\s*(?P<body>.*?)\s*-->\s*$")
IN_REPO = sorted(p.name.removeprefix("envhub-") for p in (ROOT / "plugins").glob("envhub-*") if p.is_dir())
NAMED_BACKEND = re.compile(rf"""["'](?P<a>{"|".join(IN_REPO)})/|\benvhub_(?P<b>{"|".join(IN_REPO)})\b""")


def is_doc_file(path: Path) -> bool:
    rel = path.resolve().relative_to(ROOT) if path.resolve().is_relative_to(ROOT) else None
    return rel is not None and path.suffix == ".md" and (str(rel) in DOC_FILES or rel.parts[0] == "docs")


def python_blocks(text: str) -> list[tuple[int, str, dict[str, str]]]:
    """``(first code line, code, directives)`` of every python block of a Markdown text."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, info = match["indent"], match["fence"], match["info"].lower()
        end = next(
            (
                j
                for j in range(i + 1, len(lines))
                if lines[j].strip().startswith(fence) and not lines[j].strip(fence[0]).strip()
            ),
            len(lines),
        )
        if info in ("python", "py"):
            before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            directive = DIRECTIVE.match(before)
            parts = re.split(r";\s*(?=\w+=)", directive["body"]) if directive else []  # "a=1; b=2"
            options = dict(part.partition("=")[::2] for part in parts if part.strip())
            code = "\n".join(line[len(indent) :] if line.startswith(indent) else line for line in lines[i + 1 : end])
            blocks.append((i + 2, code, {k.strip(): v.strip() for k, v in options.items()}))
        i = end + 1
    return blocks


def missing_imports(options: dict[str, str]) -> list[str]:
    """The modules a block's ``imports=`` names that cannot be imported here."""
    return [name for name in options.get("imports", "").replace(" ", "").split(",") if name and not find_spec(name)]


class MarkdownFile(pytest.File):
    """A Markdown file: one test per python block, all sharing ``namespace``."""

    def collect(self) -> list[pytest.Item]:
        self.namespace: dict[str, Any] = {"__name__": "__main__"}
        items = []
        for line, code, options in python_blocks(self.path.read_text(encoding="utf-8")):
            item = CodeBlock.from_parent(self, name=f"line-{line}", line=line, code=code)
            unknown = set(options) - {"requires", "imports", "skip"}
            if unknown:
                raise ValueError(
                    f"{self.path}:{line - 2}: unknown test directive(s) {sorted(unknown)}; use requires=, imports= "
                    f"or skip=."
                )
            if "skip" in options:
                item.add_marker(pytest.mark.skip(reason=f"illustrative only: {options['skip']}"))
            missing = missing_imports(options)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs the Python module(s) {missing}, not installed here"))
            item.requires = [p.strip() for p in options.get("requires", "").split(",") if p.strip()]
            if set(item.requires) - set(IN_REPO):
                raise ValueError(
                    f"{self.path}:{line - 2}: requires={options['requires']!r}; the in-repo plugins are {IN_REPO}."
                )
            if item.requires:
                item.add_marker(pytest.mark.requires_plugin(*item.requires))
            items.append(item)
        return items


class CodeBlock(pytest.Item):
    """One python block of a Markdown file, run in its file's namespace."""

    def __init__(self, *, line: int, code: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.line, self.code, self.requires = line, code, []

    def runtest(self) -> None:
        named = {m["a"] or m["b"] for m in NAMED_BACKEND.finditer(self.code)}
        if named - set(self.requires):
            pytest.fail(
                f"{self.path.name}:{self.line} names the backend(s) {sorted(named - set(self.requires))} without "
                f"'<!-- test: requires={','.join(sorted(named))} -->' on the line before its fence.",
                pytrace=False,
            )
        source = "\n" * (self.line - 1) + self.code  # tracebacks show the Markdown file's line numbers
        exec(compile(source, str(self.path), "exec"), self.parent.namespace)  # type: ignore[attr-defined]

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.line - 1, f"{self.path.name}:{self.line}"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    return MarkdownFile.from_parent(parent, path=file_path) if is_doc_file(file_path) else None
