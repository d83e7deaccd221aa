"""The version of envhub (stamped by scripts/version.py from the root pyproject.toml)."""

__version__ = "0.1.0"
