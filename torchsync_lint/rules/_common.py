"""Small helpers shared by rules (argument lookup, literal checks)."""

from __future__ import annotations

from typing import Optional

import libcst as cst


def arg(call: cst.Call, position: Optional[int], keyword: Optional[str] = None) -> Optional[cst.Arg]:
    """The argument passed at ``position`` or as ``keyword=``, if any."""
    for a in call.args:
        if keyword is not None and a.keyword is not None and a.keyword.value == keyword:
            return a
    if position is not None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if position < len(positional) and not any(a.star for a in call.args[: position + 1]):
            return positional[position]
    return None


def has_kwarg(call: cst.Call, name: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == name for a in call.args)


def is_true(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def is_false(expr: Optional[cst.BaseExpression]) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def method_name(call: cst.Call) -> Optional[str]:
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None
