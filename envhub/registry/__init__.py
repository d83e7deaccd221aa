"""Finding and making environments: ``api`` (``make``, ``list_*``, the default registry), ``hub`` (the
``Registry``), ``loading`` (entry points, fault isolation), ``plugin_api`` (API version, install
hints), ``hookspecs`` (the hooks a plugin implements), ``specs`` (``EnvSpec``), ``kwargs_check``
(``make``'s keywords against what an env declares), ``factory_errors`` and ``hook_probe``."""
