"""Levels as params: XLand rulesets padded to the shapes an env's ``default_params['ruleset']`` has.

A ruleset's arrays have one row per rule and per initial tile, so rulesets of one env (its params) must share
shapes: pad them to the largest, as xminigrid's benchmarks do (empty rules do nothing, empty tiles are not
placed), and make the env with a padded ``ruleset=`` to fix those shapes.
"""

from __future__ import annotations

import jax.numpy as jnp
from xminigrid.core.constants import TILES_REGISTRY, Colors, Tiles
from xminigrid.core.rules import EmptyRule
from xminigrid.types import RuleSet

from envhub.plugin import InvalidArgumentError


def pad_ruleset(ruleset: RuleSet, num_rules: int, num_tiles: int) -> RuleSet:
    """``ruleset`` with ``num_rules`` rules and ``num_tiles`` initial tiles: the missing ones empty."""
    rules, tiles = jnp.asarray(ruleset.rules), jnp.asarray(ruleset.init_tiles)
    if rules.shape[0] > num_rules or tiles.shape[0] > num_tiles:
        raise InvalidArgumentError(
            f"pad_ruleset: the ruleset has {rules.shape[0]} rules and {tiles.shape[0]} tiles, more than "
            f"num_rules={num_rules} and num_tiles={num_tiles}; pad to at least as many (make the env with a ruleset "
            f"padded that far, so its params take them)"
        )
    empty_rule = jnp.broadcast_to(EmptyRule().encode(), (num_rules - rules.shape[0], rules.shape[1]))
    empty_tile = jnp.broadcast_to(TILES_REGISTRY[Tiles.EMPTY, Colors.EMPTY], (num_tiles - tiles.shape[0], 2))
    return RuleSet(
        goal=jnp.asarray(ruleset.goal),
        rules=jnp.concatenate([rules, empty_rule.astype(rules.dtype)]),
        init_tiles=jnp.concatenate([tiles, empty_tile.astype(tiles.dtype)]),
    )


__all__ = ["pad_ruleset"]
