"""Moved to ``envhub.resets`` (shared by every JAX-native backend); these names stay importable from here."""

from envhub.plugin import Spares, no_spares, reset_done, reset_from_spares

__all__ = ["Spares", "no_spares", "reset_done", "reset_from_spares"]
