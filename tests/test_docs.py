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
from markdown_blocks import IN_REPO, NAMED_BACKEND, missing_imports, python_blocks

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
    """Each page of the public surface renders every name of its ``__all__`` or links it to the page that does."""
    hook = _api_pages_hook()
    modules = hook.public_modules()
    assert {"envhub", "envhub.wrappers", "envhub.testing", "envhub.errors", "envhub.spaces", "envhub.plugin"} <= set(
        modules
    )
    assert {"envhub.interop", "envhub.interop.gym_env", "envhub.tools", "envhub.cli", "envhub.sharding"} <= set(modules)
    missing = []
    for module in modules:
        html = (site / "reference" / module / "index.html").read_text()
        note = hook.optional_dependency_missing(module)  # e.g. envhub.interop.sb3 without stable-baselines3
        if note is not None:  # a note naming the extra, then the reference read from the source
            assert "read from the source" in html and "pip install" in html, module
        for section in hook.page_sections(module):
            if not section.members:
                assert f'id="{section.path}"' in html, section.path  # a command's module: its docstring
                continue
            names = section.exported if section.exported is not None else hook.static_all(section.path)
            for name in names:
                rendered = f'id="{section.path}.{name}"' in html
                linked = f"<code>{name}</code></a>" in html or f"<td><code>{name}</code></td>" in html  # or a value
                if not (rendered or linked):
                    missing.append(f"{section.path}.{name}")
    assert not missing, f"public names missing from the API reference: {missing}"


def test_api_reference_is_the_public_surface_only(site):
    """No page for envhub's internals (``envhub.core``, ``envhub.registry``, ...): the nav lists the surface."""
    hook = _api_pages_hook()
    pages = {path.name for path in (site / "reference").iterdir() if path.is_dir()}
    assert pages == set(hook.public_modules())
    assert not [page for page in pages if page.split(".")[1:2] in (["core"], ["registry"], ["native"], ["host"])]
    # a name several pages export is rendered once: envhub.plugin links TimeStep to the envhub page
    plugin = (site / "reference" / "envhub.plugin" / "index.html").read_text()
    assert 'id="envhub.plugin.TimeStep"' not in plugin and "../envhub/#envhub.TimeStep" in plugin


def test_long_signatures_are_formatted_one_parameter_a_line():
    hook = _api_pages_hook()
    code = "def xxxx(env_id: str, *, num_envs: int | None = None, validate_actions: bool | str = True, **kwargs: Any) -> E: pass"
    assert hook.format_def(code, 80) == (
        "def xxxx(\n"
        "    env_id: str,\n"
        "    *,\n"
        "    num_envs: int | None = None,\n"
        "    validate_actions: bool | str = True,\n"
        "    **kwargs: Any,\n"
        ") -> E:\n"
        "    pass\n"
    )
    assert hook.format_def("def xx(a, b=1): pass", 80) == "def xx(a, b=1):\n    pass\n"
    assert hook.format_def("def xxxxxxxx(a, /, b, *args, c=2): pass", 24) == (
        "def xxxxxxxx(\n    a, /, b, *args, c=2\n):\n    pass\n"
    )
    assert hook.format_def("x = [1, 2]", 4) == "x = [1, 2]"  # not a signature: unchanged
    assert hook.format_def("def (", 4) == "def ("


def test_a_missing_optional_dependency_names_its_extra():
    hook = _api_pages_hook()
    assert hook.extra_for("gymnasium") == "gymnasium" and hook.extra_for("pettingzoo") == "pettingzoo"
    assert hook.extra_for("no-such-package") is None
    note = hook.Missing("envhub.interop.gym_env", "gymnasium", "gymnasium", 'pip install "envhub[gymnasium]"').note()
    assert note.startswith('!!! note "Needs the gymnasium extra"') and "envhub[gymnasium]" in note


def test_backends_table_lists_every_installed_backend(site):
    html = (site / "backends" / "index.html").read_text()
    backends = envhub.list_backends()
    if not backends:
        assert "No backend plugin is installed" in html
    for backend in backends:
        assert f"<td><code>{backend.distribution}</code> {backend.version}</td>" in html, backend.prefix


def _backends_hook():
    return load_file(ROOT / "docs" / "hooks" / "backends.py", "backends_hook")


def test_in_repo_backends_are_read_from_the_plugins_folder():
    plugins = _backends_hook().in_repo_plugins()
    folders = sorted(p.name for p in (ROOT / "plugins").glob("envhub-*") if (p / "pyproject.toml").is_file())
    assert sorted(p.distribution for p in plugins) == folders
    assert [p.prefix for p in plugins] == sorted(name.removeprefix("envhub-") for name in folders)
    assert all(p.version and p.description and p.api == "1" and p.batching for p in plugins)


def test_every_page_naming_the_backends_names_the_same_generated_set(site):
    prefixes = [p.prefix for p in _backends_hook().in_repo_plugins()]
    pages = ("index.html", "quickstart/index.html", "third-party-plugins/index.html", "backends/index.html")
    for page in (*pages, "install/index.html"):
        html = (site / page).read_text()
        assert "backends:" not in html, page  # every marker replaced
        assert [p for p in prefixes if f"<code>{p}</code>" not in html] == [], page
        assert f"{len(prefixes)} " in html, page  # the count
    quickstart = (site / "quickstart" / "index.html").read_text()
    assert all(f"envhub-{p}" in quickstart for p in prefixes)  # the `envhub list` output
    for page in ("index.md", "quickstart.md", "third-party-plugins.md", "install.md"):  # none writes a list by hand
        assert "<!-- backends:names -->" in (ROOT / "docs" / page).read_text(), page


def test_install_page_generates_its_list_of_backends_and_has_an_extra_for_each():
    """docs/install.md names the in-repo backends through the markers (no line lists them by hand), and its extras
    table has a row per in-repo backend (the row says what else the extra brings, so it is written, and held here)."""
    page = (ROOT / "docs" / "install.md").read_text()
    assert "<!-- backends:names -->" in page and "<!-- backends:count -->" in page
    prefixes = [p.prefix for p in _backends_hook().in_repo_plugins()]
    hand_lists = [
        line for line in page.splitlines() if sum(re.search(rf"\b{p}\b", line) is not None for p in prefixes) > 3
    ]
    assert hand_lists == []
    assert [p for p in prefixes if f"| `{p}` | the plugin `envhub-{p}`" not in page] == []


def test_the_backends_page_details_every_in_repo_backend_below_its_table():
    page = (ROOT / "docs" / "backends.md").read_text()
    assert "<!-- backends:in-repo -->" in page
    missing = [p.prefix for p in _backends_hook().in_repo_plugins() if f"- **`{p.prefix}`**: " not in page]
    assert not missing, f"docs/backends.md has no paragraph under the in-repo table for {missing}"
    for line in page.splitlines():  # every cell of a table short: details go below it
        if line.startswith("|"):
            assert all(len(cell.split()) <= 40 for cell in line.split("|")), line


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


def test_a_block_needing_a_module_of_no_plugin_is_skipped_where_it_is_missing():
    options = python_blocks("<!-- test: imports=json, envhub_no_such_module -->\n```python\nx = 1\n```\n")[0][2]
    assert missing_imports(options) == ["envhub_no_such_module"] and missing_imports({}) == []


def test_a_block_naming_a_backend_must_require_it():
    assert "gymnax" in IN_REPO
    named = {m["a"] or m["b"] for m in NAMED_BACKEND.finditer('envhub.make("gymnax/CartPole-v1")\nimport envhub_brax')}
    assert named == {"gymnax", "brax"}
    assert not list(NAMED_BACKEND.finditer('envhub.make("countdown/Countdown-v0")'))
