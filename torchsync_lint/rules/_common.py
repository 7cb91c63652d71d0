"""Small helpers shared by rules (argument lookup, literal checks)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchsync_lint.inference.values import BATCH, CPU, CUDA, DEVICE, LIST, STR, TENSOR, TENSOR_SEQ, TUPLE, UNKNOWN, Value
from torchsync_lint.syntax.walk import iter_children


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
    return type(expr) is cst.Name and expr.value == "True"


def is_false(expr: Optional[cst.BaseExpression]) -> bool:
    return type(expr) is cst.Name and expr.value == "False"


def non_blocking(call: cst.Call) -> bool:
    """``non_blocking=`` anything but False (a flag may be True), or ``True`` passed where
    ``to(device, dtype, non_blocking)`` / ``to(dtype, non_blocking)`` / ``to(other, non_blocking)`` take it."""
    kw = arg(call, None, "non_blocking")
    if kw is not None:
        return not is_false(kw.value)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return any(is_true(v) for v in positional[1:3])


def names_a_gpu_device(ctx, call: cst.Call) -> bool:
    """``.to(...)`` moves to a device that is not known to be the CPU: ``device=``,
    ``torch.device(...)``, ``"cuda"``, another tensor, or a name that says it holds a device
    (``device``, ``self.dev``: a dtype would say dtype, and the evaluator types those)."""
    given = arg(call, None, "device")
    if given is None:
        if not call.args or call.args[0].keyword is not None:
            return False
        given = call.args[0]
    expr = given.value
    if type(expr) is cst.SimpleString:
        return "cuda" in expr.evaluated_value  # not "meta", "cpu"
    v = ctx.value(expr)
    if v.kind in (DEVICE, STR, TENSOR):
        return v.device != CPU
    name = expr.attr.value if type(expr) is cst.Attribute else expr.value if type(expr) is cst.Name else ""
    return v.kind == UNKNOWN and name.lower().endswith(("device", "dev"))


def method_name(call: cst.Call) -> Optional[str]:
    return call.func.attr.value if type(call.func) is cst.Attribute else None


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


def on_self(expr: cst.BaseExpression) -> bool:
    """``self`` or an attribute of it (``self.model``, ``self.filt``)."""
    while type(expr) is cst.Attribute:
        expr = expr.value
    return type(expr) is cst.Name and expr.value == "self"


def gpu_tensor_by_evidence(value: Value) -> bool:
    """A tensor not known to be on the CPU, known as a tensor from more than a convention."""
    return value.maybe_gpu and not value.assumed


def may_be_on_gpu(value: Value) -> bool:
    """A tensor not known to be on the CPU, or a value inference cannot place (an argument of a
    torch function that only takes tensors), or a part of a batch already on the device (what
    Lightning's step gets: ``x, y = batch``)."""
    return value.maybe_gpu or value.kind == UNKNOWN or on_device_batch(value)


def on_device_batch(value: Value) -> bool:
    """A batch (or a part of one) moved to the GPU: where a tensor is expected, a GPU tensor."""
    return value.kind == BATCH and value.device == CUDA


def number_literal(expr: Optional[cst.BaseExpression]) -> Optional[float]:
    """The value of an int/float literal (``3``, ``-1``, ``0.5``), else None."""
    negative = False
    if type(expr) is cst.UnaryOperation and type(expr.operator) in (cst.Minus, cst.Plus):
        negative = type(expr.operator) is cst.Minus
        expr = expr.expression
    if type(expr) in (cst.Integer, cst.Float):
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
    return not (p.params or p.posonly_params or p.kwonly_params or type(p.star_arg) is cst.Param or p.star_kwarg)


# Factories whose leading arguments (or a sequence in the first) are the sizes of the tensor.
SIZED_FACTORIES = frozenset(("torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.rand", "torch.randn"))


def empty_literal(expr: Optional[cst.BaseExpression]) -> bool:
    """``[]`` or ``()``: data with no element, nothing to copy."""
    return type(expr) in (cst.List, cst.Tuple) and not expr.elements


def no_element_factory(ctx, expr: cst.BaseExpression) -> bool:
    """``torch.empty(0)``, ``torch.zeros(0, 3)``, ``torch.ones((4, 0))``: a factory call one of
    whose literal sizes is 0, so the tensor holds no element (copying it moves no data)."""
    if type(expr) is not cst.Call or ctx.qualname(expr.func) not in SIZED_FACTORIES:
        return False
    sizes = [a.value for a in expr.args if a.keyword is None and not a.star]
    if ctx.qualname(expr.func) == "torch.full":
        sizes = sizes[:1]
    size_kw = arg(expr, None, "size")
    if size_kw is not None:
        sizes = [size_kw.value]
    if len(sizes) == 1 and type(sizes[0]) in (cst.List, cst.Tuple):
        sizes = [e.value for e in sizes[0].elements]
    return any(type(s) is cst.Integer and s.evaluated_value == 0 for s in sizes)


def same_operand(a: Optional[cst.BaseExpression], b: Optional[cst.BaseExpression]) -> bool:
    """Both operands are the same plain name or attribute chain (``torch.equal(a, a)``)."""
    if a is None or b is None:
        return False
    if type(a) is cst.Name and type(b) is cst.Name:
        return a.value == b.value
    if type(a) is cst.Attribute and type(b) is cst.Attribute:
        return a.attr.value == b.attr.value and same_operand(a.value, b.value)
    return False
