"""Host environments (gymnasium, envpool): ``environment`` (``HostEnvironment``), ``bridge`` (the table
of live host envs; eager, traced and vmapped calls), ``callback`` (the host-call kinds) and
``gymnasium_spaces`` (gymnasium <-> envhub spaces)."""
