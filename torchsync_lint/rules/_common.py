"""Small helpers shared by rules (argument lookup, literal checks)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchsync_lint.inference.values import CPU, LIST, TENSOR_SEQ, TUPLE, UNKNOWN, Value
from torchsync_lint.walk import iter_children


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


def holds_gpu_tensor(value: Value, evidence: bool = False) -> bool:
    """A tensor not known to be on the CPU, or a tuple/list/sequence that holds one. With
    ``evidence``, not a tensor only by convention (an unannotated ``forward`` input, ``n // 2`` of
    one): rules about Python-level uses (sizes, branches) ask for evidence."""
    if value.maybe_gpu:
        return not (evidence and value.assumed)
    if value.kind == TENSOR_SEQ:
        return value.device != CPU
    if value.kind in (LIST, TUPLE):
        return any(holds_gpu_tensor(v, evidence) for v in value.elts)
    return False


def gpu_tensor_by_evidence(value: Value) -> bool:
    """A tensor not known to be on the CPU, known as a tensor from more than a convention."""
    return value.maybe_gpu and not value.assumed


def may_be_on_gpu(value: Value) -> bool:
    """A tensor not known to be on the CPU, or a value inference cannot place (an argument of a
    torch function that only takes tensors)."""
    return value.maybe_gpu or value.kind == UNKNOWN


def number_literal(expr: Optional[cst.BaseExpression]) -> Optional[float]:
    """The value of an int/float literal (``3``, ``-1``, ``0.5``), else None."""
    negative = False
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        negative = isinstance(expr.operator, cst.Minus)
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        value = float(expr.evaluated_value)
        return -value if negative else value
    return None


def collect_ids(node: cst.CSTNode, into: set) -> None:
    """Add ``id()`` of ``node`` and of every node below it (to skip a subtree in later visits)."""
    stack = [node]
    while stack:
        n = stack.pop()
        into.add(id(n))
        stack.extend(iter_children(n))


def is_thunk(node: cst.Lambda) -> bool:
    """``lambda: ...`` without parameters: deferred code, typically an error message built only
    on failure (``torch._check(cond, lambda: f"...")``)."""
    p = node.params
    return not (p.params or p.posonly_params or p.kwonly_params or isinstance(p.star_arg, cst.Param) or p.star_kwarg)
