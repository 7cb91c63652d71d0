"""What names hold at a point: a function's (or the module's) values, then the enclosing scopes'."""

from __future__ import annotations

from typing import Dict, Optional

from torchsync_lint.inference.index import ClassInfo, FunctionInfo
from torchsync_lint.inference.values import Value


class Scope:
    __slots__ = ("func", "parent", "values", "cls")

    def __init__(self, func: Optional[FunctionInfo], parent: Optional["Scope"], values: Dict[str, Value]):
        self.func = func
        self.parent = parent
        self.values = values
        self.cls: Optional[ClassInfo] = func.cls if func is not None else (parent.cls if parent else None)
        if self.cls is None and parent is not None:
            self.cls = parent.cls

    def lookup(self, name: str) -> Optional[Value]:
        scope: Optional[Scope] = self
        while scope is not None:
            v = scope.values.get(name)
            if v is not None:
                return v
            scope = scope.parent
        return None
