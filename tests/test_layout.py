"""The house rules that a reader relies on: every source module of the core and of the in-repo plugins
stays at 300 lines or fewer (CONTRIBUTING), so each can be read in one sitting."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 300


def test_every_source_module_is_at_most_300_lines():
    sources = [*(ROOT / "envhub").rglob("*.py"), *ROOT.glob("plugins/*/src/**/*.py")]
    assert len(sources) > 50 and (ROOT / "envhub" / "native" / "environment.py") in sources
    too_long = {str(p.relative_to(ROOT)): n for p in sources if (n := len(p.read_text().splitlines())) > LIMIT}
    assert too_long == {}, f"split these by concept (CONTRIBUTING): {too_long}"
