"""LibCST's parse without re-validating what its own parser built.

``libcst.parse_module`` builds the tree through each node's dataclass constructor, whose
``__post_init__`` runs the node's ``_validate`` (balanced parentheses, required whitespace, legal
names...): checks meant for trees that code builds by hand. On a tree the native parser produced
from source they are a third of the parse (``modeling_utils.py`` of transformers: 0.32 -> 0.23 s)
and never fail (``tests/test_parse.py`` parses the fixtures and a real tree both ways: the same
trees, the same refusals). ``parse_module`` here is LibCST's with that call skipped for the nodes
built during the parse; the tree is the one LibCST returns (same classes, fields, code).

Threads: the hook is swapped on LibCST's base class for the length of one parse, under a lock;
a node another thread builds by hand meanwhile goes unvalidated (never wrong for a valid node).
"""

from __future__ import annotations

import threading

import libcst as cst

_LOCK = threading.RLock()
# None on a LibCST whose base class validates elsewhere: then every parse is LibCST's as it is
_VALIDATING = cst.CSTNode.__dict__.get("__post_init__")


def _no_validation(self) -> None:
    return None


def parse_module(source: str) -> cst.Module:
    """``libcst.parse_module(source)``, the nodes built without ``_validate``; raises as it does."""
    if _VALIDATING is None:
        return cst.parse_module(source)
    with _LOCK:
        if cst.CSTNode.__dict__.get("__post_init__") is not _VALIDATING:
            return cst.parse_module(source)  # someone else swapped it (a nested parse): leave it be
        cst.CSTNode.__post_init__ = _no_validation  # type: ignore[method-assign]
        try:
            return cst.parse_module(source)
        finally:
            cst.CSTNode.__post_init__ = _VALIDATING  # type: ignore[method-assign]
