"""JAX-native environments: ``environment`` (``JaxEnvironment``: batching, same-step auto-reset, the time
limit, casting) and ``resets`` (which episodes restart, and from which spare states)."""
