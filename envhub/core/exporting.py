"""Pytree types made serializable by ``jax.export``, so ``jax.export.export(jax.jit(env.step))`` serializes.

``jax.export`` serializes the input and output pytree structure of a program, and refuses node types
it was not told how to name (a backend's state class, ``TimeStep``, a wrapper's state).
``register_for_export(tree)`` registers every node type in ``tree`` that is not yet registered: a
NamedTuple by name, any other node type by ``module.qualname`` with its auxiliary data pickled (only
deserialize exports you trust, as with any pickle). ``Environment.init`` calls it on what it returns
and on the action space's structure, so every env's state, TimeStep and actions are covered;
``envhub.tools.rollout``'s ``Trajectory`` and ``Transition`` are registered when it is imported. A process
that deserializes such an export must have registered the same types: ``make`` the env and ``init`` it
once, or call ``register_for_export`` on a tree of the same structure.
"""

from __future__ import annotations

import collections
import pickle
import threading
from typing import Any

import jax
import jax.export  # jax before 0.7 does not import this submodule itself

_BUILTIN = {tuple, list, dict, type(None), collections.OrderedDict, collections.defaultdict}
_done: set[type] = set()
_seen: set[Any] = set()  # treedefs already walked
_lock = threading.Lock()


def register_for_export(tree: Any) -> None:
    """Register every pytree node type of ``tree`` (a pytree or a ``PyTreeDef``) with ``jax.export``."""
    treedef = tree if isinstance(tree, jax.tree_util.PyTreeDef) else jax.tree.structure(tree)
    if treedef in _seen:
        return
    with _lock:
        _walk(treedef)
        _seen.add(treedef)


def register_types(*nodetypes: type) -> None:
    """Register pytree node types (already pytrees) with ``jax.export``, e.g. a result type of envhub's own."""
    with _lock:
        for nodetype in nodetypes:
            if nodetype not in _done:
                _register(nodetype)


def _walk(treedef: jax.tree_util.PyTreeDef) -> None:
    data = treedef.node_data()
    if data is not None and data[0] not in _BUILTIN and data[0] not in _done:
        _register(data[0])
    for child in treedef.children():
        _walk(child)


def _register(nodetype: type) -> None:
    name = f"{nodetype.__module__}.{nodetype.__qualname__}"
    try:
        if issubclass(nodetype, tuple) and hasattr(nodetype, "_fields"):
            jax.export.register_namedtuple_serialization(nodetype, serialized_name=name)
        else:
            jax.export.register_pytree_node_serialization(
                nodetype, serialized_name=name, serialize_auxdata=pickle.dumps, deserialize_auxdata=pickle.loads
            )
    except ValueError:  # already registered, by us in another thread or by its library: fine either way
        pass
    _done.add(nodetype)


__all__ = ["register_for_export", "register_types"]
