"""JAX-native environments: ``environment`` (``JaxEnvironment``: batching, the time limit, casting), ``state``
(``JaxState``), ``auto_reset`` (how finished episodes restart: the one home of the schemes) and ``resets`` (the
functions the schemes are built from)."""
