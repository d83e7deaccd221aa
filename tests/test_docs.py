"""The documentation site builds (``mkdocs build --strict``) and documents every public name.

The python blocks of the pages themselves run through ``tests/markdown_blocks.py``; the tests at the
end check that collector's parsing and its requires= rule.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import re
from pathlib import Path

import pytest
from examples_loader import load_file
from markdown_blocks import IN_REPO, NAMED_BACKEND, python_blocks

import envhub

ROOT = Path(__file__).resolve().parents[1]
DOCS_PACKAGES = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def _missing_docs_package() -> str | None:
    for name in DOCS_PACKAGES:
        try:
            if importlib.util.find_spec(name) is None:
                return name
        except ModuleNotFoundError:
            return name
    return None


def _api_pages_hook():
    return load_file(ROOT / "docs" / "hooks" / "api_pages.py", "api_pages")


class _Warnings(logging.Handler):
    """Keeps mkdocs' warnings, to name them when the strict build aborts."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname}: {record.getMessage()}")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """``mkdocs build --strict`` as its command runs it, in this process: the backends table's hook makes
    one env of every backend, whose libraries this worker imported at collection (a subprocess spent
    ~10 of its ~20 s importing them again)."""
    missing = _missing_docs_package()
    if missing is not None:
        pytest.skip(f"the docs build needs {missing}, which is not installed (uv pip install -e '.[docs]')")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    out = tmp_path_factory.mktemp("site")
    logger, kept = logging.getLogger("mkdocs"), _Warnings()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # pymdownx.snippets reads paths from the working directory
        patch.setenv("NO_MKDOCS_2_WARNING", "1")
        patch.setattr(logger, "propagate", False)  # as the command: mkdocs' log is its own, not the root's
        logger.addHandler(kept)
        config = load_config(str(ROOT / "mkdocs.yml"), strict=True, site_dir=str(out))
        config.plugins.on_startup(command="build", dirty=False)
        try:
            build(config)
        except Abort as exc:
            pytest.fail(f"mkdocs build --strict failed: {exc}\n" + "\n".join(kept.lines))
        finally:
            config.plugins.on_shutdown()
            logger.removeHandler(kept)
    return out


def test_site_builds_strict_with_every_page(site):
    for page in ("index", "quickstart/index", "timestep/index", "backends/index", "errors/index", "plugins/index"):
        assert (site / f"{page}.html").is_file(), page
    assert (site / "assets" / "episode-boundary.svg").is_file()
    assert (site / "assets" / "throughput.png").read_bytes() == (
        ROOT / "benchmarks/results/throughput.png"
    ).read_bytes()
    html = (site / "performance" / "index.html").read_text()
    assert "brax after issue 15" in html, "RESULTS.md is not included in the performance page"


def test_api_reference_documents_every_public_name(site):
    hook = _api_pages_hook()
    modules = hook.public_modules()
    assert {"envhub", "envhub.wrappers", "envhub.testing", "envhub.errors", "envhub.spaces"} <= set(modules)
    missing = []
    for module in modules:
        html = (site / "reference" / module / "index.html").read_text()
        missing_extra = hook.optional_dependency_missing(module)
        if missing_extra is not None:  # e.g. envhub.interop.sb3 without stable-baselines3: a note, named
            assert "Not rendered in this build" in html and "pip install" in html, module
            continue
        mod = importlib.import_module(module)
        for name in getattr(mod, "__all__", []):
            index = hook.is_index(mod)  # a package or envhub.plugin: a table of links
            found = f"<code>{name}</code>" in html if index else f'id="{module}.{name}"' in html
            if not found:
                missing.append(f"{module}.{name}")
    assert not missing, f"public names missing from the API reference: {missing}"


def test_backends_table_lists_every_installed_backend(site):
    html = (site / "backends" / "index.html").read_text()
    backends = envhub.list_backends()
    if not backends:
        assert "No backend plugin is installed" in html
    for backend in backends:
        assert f"<td><code>{backend.distribution}</code> {backend.version}</td>" in html, backend.prefix


def test_errors_page_names_every_public_error_and_warning():
    import envhub.errors

    page = (ROOT / "docs" / "errors.md").read_text()
    classes = [n for n in envhub.errors.__all__ if isinstance(getattr(envhub.errors, n), type)]
    assert "ActionError" in classes and "PicklingUnsupportedError" in classes
    assert [n for n in classes if not re.search(rf"[`.]{n}`", page)] == []  # `Name` or `envhub.errors.Name`


# --- the code-block collector ---------------------------------------------------------------------

PAGE = """Text.

<!-- test: requires=gymnax,brax -->
```python
x = 1
```

```bash
echo not python
```

<!-- test: skip=a fragment; not runnable -->
    ```py
    y = x + 1
    ```
"""


def test_python_blocks_reads_code_lines_and_directives():
    blocks = python_blocks(PAGE)
    assert [(line, code) for line, code, _ in blocks] == [(5, "x = 1"), (14, "y = x + 1")]
    assert blocks[0][2] == {"requires": "gymnax,brax"}
    assert blocks[1][2] == {"skip": "a fragment; not runnable"}


def test_a_block_naming_a_backend_must_require_it():
    assert "gymnax" in IN_REPO
    named = {m["a"] or m["b"] for m in NAMED_BACKEND.finditer('envhub.make("gymnax/CartPole-v1")\nimport envhub_brax')}
    assert named == {"gymnax", "brax"}
    assert not list(NAMED_BACKEND.finditer('envhub.make("countdown/Countdown-v0")'))
