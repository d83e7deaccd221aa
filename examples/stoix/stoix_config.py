"""What both Stoix examples share: Stoix's own hydra config, composed from Stoix's source root (the working
directory: its configs live in ``stoix/configs``), and how a run's result is written."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def compose(architecture: str, config: str, overrides: list[str]) -> Any:
    """Stoix's ``stoix/configs/default/<architecture>/<config>`` with hydra ``overrides``, open to new keys."""
    import hydra
    from omegaconf import OmegaConf

    config_dir = Path(f"stoix/configs/default/{architecture}").resolve()
    if not config_dir.is_dir():
        sys.exit(f"run this from Stoix's source root (no {config_dir}); see the docstring")
    with hydra.initialize_config_dir(config_dir=str(config_dir), version_base="1.2"):
        cfg = hydra.compose(config, overrides=overrides)
    OmegaConf.set_struct(cfg, False)
    return cfg


def finish(result: dict[str, Any], out: Path | None, summary: tuple[str, ...]) -> dict[str, Any]:
    """``result`` with the machine's JAX version, backend and CPU count, written to ``out`` (a run file) where given;
    its ``summary`` keys printed as one JSON line."""
    import jax

    result.update(jax=jax.__version__, backend=jax.default_backend(), cpus=os.cpu_count())
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in summary}))
    return result
