"""Qualified names from imports: a light alias table instead of LibCST's QualifiedNameProvider.

``import torch as th`` maps ``th`` to ``torch``; ``from torch import nonzero`` maps ``nonzero`` to
``torch.nonzero``; ``import torch.nn.functional as F`` maps ``F``; relative imports resolve
against the file's own module name. Built once per file from every import statement in it
(imports inside functions included: flow-insensitive, which is what code in the wild needs).
"""

from __future__ import annotations

import builtins
from typing import Dict, List, Optional

import libcst as cst

from torchsync_lint.inference.stars import import_base

BUILTIN_NAMES = frozenset(dir(builtins))


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    # exact types (LibCST's node classes have no subclasses): isinstance against their abstract-base
    # metaclass costs ten times as much, and every name the rules read comes through here
    while type(node) is cst.Attribute:
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


class Aliases:
    def __init__(self, module_name: str = "", is_package: bool = False) -> None:
        self.module_name = module_name
        self.is_package = is_package
        self.map: Dict[str, str] = {}
        self.shadowed: set = set()  # local defs that hide a builtin of the same name
        self.shadowed_nodes: set = set()  # id() of uses of a builtin's name that a function binds
        # `from .imports import *`: modules whose public names this one takes (the project expands
        # them, ``Project.exported``); `star_uses`: the free names this file reads, the only ones asked
        self.stars: List[str] = []
        self.star_uses: set = set()
        self.stars_taken = False

    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if full is None:
                continue
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                self.map[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                self.map[head] = head

    def _base_module(self, node: cst.ImportFrom) -> Optional[str]:
        mod = dotted(node.module) if node.module is not None else ""
        if mod is None:
            return None
        return import_base(self.module_name, self.is_package, len(node.relative), mod)

    def add_import_from(self, node: cst.ImportFrom) -> None:
        base = self._base_module(node)
        if base is None:
            return
        if type(node.names) is cst.ImportStar:
            if base:
                self.stars.append(base)
            return
        for alias in node.names:
            name = dotted(alias.name)
            if name is None:
                continue
            local = alias.asname.name.value if alias.asname is not None and type(alias.asname.name) is cst.Name else name
            self.map[local] = f"{base}.{name}" if base else name

    def qualify(self, node: cst.BaseExpression) -> Optional[str]:
        """The qualified name of a Name/Attribute chain rooted at an import or a builtin."""
        parts = []
        while type(node) is cst.Attribute:  # exact types, as in ``dotted``
            parts.append(node.attr.value)
            node = node.value
        if type(node) is not cst.Name:
            return None
        head = node.value
        if head in self.map:
            root = self.map[head]
        elif head in BUILTIN_NAMES and head not in self.shadowed and id(node) not in self.shadowed_nodes:
            root = f"builtins.{head}"
        else:
            return None
        parts.append(root)
        return ".".join(reversed(parts))
