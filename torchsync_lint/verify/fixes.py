"""``--verify-fixes``: each rule's suggested sync-free rewrite of the flagged statement.

Kept here, keyed by rule code, so rule files stay as their owners wrote them. A rewrite gets the
flagged statement and node (LibCST) and returns the rewritten statement's source, or a reason
why the rule has no statement-local rewrite (hoisting to ``__init__``, a size only the user knows).
The child runs the rewrite on the same synthesised inputs: sync-free by the same oracles, and the
same values (every name the statement binds or changes, compared after the run).
"""

from __future__ import annotations

from typing import Callable, Dict, Optional, Union

import libcst as cst

from torchsync_lint.finding import INDENT

NO_REWRITE = {
    "TSL006": "formatting a tensor needs its value: log it every N steps instead",
    "TSL101": "a sync-free nonzero needs a known size (nonzero_static) or a shape-keeping rewrite",
    "TSL102": "unique has no fixed-size form; the rewrite depends on what the result is used for",
    "TSL103": "a boolean-mask read changes the shape; the shape-keeping rewrite depends on the use",
    "TSL104": "masked_select changes the shape; the rewrite depends on the use",
    "TSL105": "output_size must come from the user's knowledge of the data",
    "TSL106": "bincount has no fixed-size form without a known count",
    "TSL107": "histc needs the data range (min=, max=) from the user",
    "TSL108": "one_hot needs num_classes from the user",
    "TSL202": "the fix moves the tensor to __init__ (a buffer): not a statement-local rewrite",
    "TSL302": "a branch on a tensor needs restructuring (torch.where), not a local rewrite",
    "TSL303": "a tensor used as a Python int needs the size from elsewhere",
}

Rewrite = Callable[[cst.CSTNode, Optional[cst.CSTNode]], Union[cst.CSTNode, str]]


def _arg(a: cst.Arg) -> str:
    prefix = "*" * len(a.star) if a.star else ""
    if a.keyword is not None:
        prefix = a.keyword.value + "="
    return prefix + _code(a.value)


def _expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _attr_call(node) -> Optional[cst.Call]:
    return node if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) else None


def _find(stmt: cst.CSTNode, pred) -> Optional[cst.CSTNode]:
    found = []

    class V(cst.CSTVisitor):
        def on_visit(self, node):
            if not found and pred(node):
                found.append(node)
                return False
            return True

    stmt.visit(V())
    return found[0] if found else None


def _method_call(names):
    def pred(n):
        return isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in names
    return pred


def _func_call(names):
    def pred(n):
        if not isinstance(n, cst.Call):
            return False
        f = n.func
        last = f.attr.value if isinstance(f, cst.Attribute) else (f.value if isinstance(f, cst.Name) else "")
        return last in names
    return pred


def _replace(stmt: cst.CSTNode, old: cst.CSTNode, new: cst.CSTNode) -> cst.CSTNode:
    return stmt.deep_replace(old, new)


def _pick(stmt, node, pred):
    if node is not None and pred(node):
        return node
    return _find(stmt, pred)


def fix_item(stmt, node):
    call = _pick(stmt, node, _method_call({"item", "tolist"}))
    if call is None:
        return "no .item()/.tolist() call found"
    return _replace(stmt, call, call.with_changes(func=call.func.with_changes(attr=cst.Name("detach")), args=[]))


def fix_copy_to_host(stmt, node):
    call = _pick(stmt, node, _method_call({"cpu", "to", "numpy"}))
    if call is None:
        return "no host copy found"
    name = call.func.attr.value
    if name == "numpy":
        return "a numpy array needs the data on the host: no sync-free rewrite"
    if name == "cpu":
        new = _expr(f"({_code(call.func.value)}).to('cpu', non_blocking=True)")
        return _replace(stmt, call, new)
    args = [a for a in call.args if not (a.keyword and a.keyword.value == "non_blocking")]
    args.append(cst.Arg(keyword=cst.Name("non_blocking"), value=cst.Name("True"),
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
    return _replace(stmt, call, call.with_changes(args=args))


def fix_scalar(stmt, node):
    call = _pick(stmt, node, _func_call({"float", "int", "bool"}))
    if call is None or not isinstance(call.func, cst.Name) or len(call.args) != 1:
        return "no float()/int()/bool() call found"
    method = {"float": "float", "int": "long", "bool": "bool"}[call.func.value]
    return _replace(stmt, call, _expr(f"({_code(call.args[0].value)}).{method}()"))


def _is_number(e) -> bool:
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
        e = e.expression
    return isinstance(e, (cst.Integer, cst.Float))


def fix_min_max(stmt, node):
    call = _pick(stmt, node, lambda n: isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
                 and n.func.value in ("min", "max"))
    if call is None:
        return "no builtin min()/max() found"
    fn = call.func.value
    args = [a.value for a in call.args if a.keyword is None]
    if len(args) == 1:
        return _replace(stmt, call, _expr(f"({_code(args[0])}).{fn}()"))
    if len(args) == 2:
        a, b = args
        bound = "min" if fn == "max" else "max"
        if _is_number(a):
            return _replace(stmt, call, _expr(f"torch.clamp({_code(b)}, {bound}={_code(a)})"))
        if _is_number(b):
            return _replace(stmt, call, _expr(f"torch.clamp({_code(a)}, {bound}={_code(b)})"))
        op = "maximum" if fn == "max" else "minimum"
        both = f"torch.as_tensor({_code(a)}), torch.as_tensor({_code(b)})"
        return _replace(stmt, call, _expr(f"torch.{op}({both})"))
    return "min/max of more than two values"


def fix_host_index(stmt, node):
    sub = _pick(stmt, node, lambda n: isinstance(n, cst.Subscript) and _find(n, _func_call({"range"})) is not None)
    if sub is None:
        return "only a range() index has a statement-local rewrite (build lists as device tensors once)"
    base = _code(sub.value)
    rng = _find(sub, _func_call({"range"}))
    args = ", ".join(_arg(a) for a in rng.args)
    return _replace(stmt, rng, _expr(f"torch.arange({args}, device=({base}).device)"))


def fix_index_put_scalar(stmt, node):
    targets = stmt.targets if isinstance(stmt, cst.Assign) else []
    if len(targets) != 1 or not isinstance(targets[0].target, cst.Subscript):
        return "not an `x[idx] = value` assignment"
    base = _code(stmt.targets[0].target.value)
    value = _code(stmt.value)
    return stmt.with_changes(value=_expr(f"torch.full((), {value}, dtype=({base}).dtype, device=({base}).device)"))


def fix_assert(stmt, node):
    if not isinstance(stmt, cst.Assert):
        return "not an assert statement"
    return cst.Expr(_expr(f"torch._assert_async(torch.as_tensor({_code(stmt.test)}))"))


def fix_remove(stmt, node):
    if isinstance(stmt, cst.Expr):
        return cst.Pass()
    return "the call's result is used: remove it by hand"


def fix_equality(stmt, node):
    call = _pick(stmt, node, _func_call({"equal", "allclose", "is_nonzero"}))
    if call is None:
        return "no equal/allclose/is_nonzero call found"
    f = call.func
    name = f.attr.value if isinstance(f, cst.Attribute) else f.value
    args = [_arg(a) for a in call.args]
    is_method = isinstance(f, cst.Attribute) and not (isinstance(f.value, cst.Name) and f.value.value in ("torch",))
    if is_method:
        args = [_code(f.value)] + args
    if name == "is_nonzero":
        return _replace(stmt, call, _expr(f"({args[0]}).bool()"))
    fn = "eq" if name == "equal" else "isclose"
    return _replace(stmt, call, _expr(f"torch.{fn}({', '.join(args)}).all()"))


def fix_distribution(stmt, node):
    call = _pick(stmt, node, lambda n: isinstance(n, cst.Call) and (
        isinstance(n.func, (cst.Attribute, cst.Name)) and
        ((n.func.attr.value if isinstance(n.func, cst.Attribute) else n.func.value)[:1].isupper())))
    if call is None:
        return "no distribution constructor found"
    args = [a for a in call.args if not (a.keyword and a.keyword.value == "validate_args")]
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
    args.append(cst.Arg(keyword=cst.Name("validate_args"), value=cst.Name("False"),
                        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    return _replace(stmt, call, call.with_changes(args=args))


LINALG = {"inv": ("inv_ex", "inverse"), "inverse": ("inv_ex", "inverse"), "cholesky": ("cholesky_ex", "L"),
          "solve": ("solve_ex", "result"), "matrix_power": None}


def fix_linalg(stmt, node):
    call = _pick(stmt, node, _func_call({k for k, v in LINALG.items() if v}))
    if call is None:
        return "no linalg call with an _ex form found"
    f = call.func
    name = f.attr.value if isinstance(f, cst.Attribute) else f.value
    ex, field_ = LINALG[name]
    args = ", ".join(_arg(a) for a in call.args)
    return _replace(stmt, call, _expr(f"torch.linalg.{ex}({args}).{field_}"))


def fix_clip(stmt, node):
    call = _pick(stmt, node, _func_call({"clip_grad_norm_", "clip_grad_norm"}))
    if call is None:
        return "no clip_grad_norm_ call found"
    args = [a for a in call.args if not (a.keyword and a.keyword.value == "error_if_nonfinite")]
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
    return _replace(stmt, call, call.with_changes(args=args))


REWRITES: Dict[str, Rewrite] = {
    "TSL001": fix_item,
    "TSL002": fix_item,
    "TSL003": fix_copy_to_host,
    "TSL004": fix_scalar,
    "TSL005": fix_min_max,
    "TSL201": fix_host_index,
    "TSL203": fix_index_put_scalar,
    "TSL301": fix_assert,
    "TSL401": fix_remove,
    "TSL402": fix_remove,
    "TSL403": fix_equality,
    "TSL404": fix_distribution,
    "TSL405": fix_linalg,
    "TSL406": fix_clip,
}


def _autofix(stmt: cst.CSTNode, node: Optional[cst.CSTNode], fix) -> Optional[cst.CSTNode]:
    """The statement as ``--fix`` would rewrite it (the finding's own ``Fix``), when that fix is
    local to the statement (a hoist into ``__init__`` is not) and was made for this node."""
    if fix is None or fix.hoist is not None or node is None:
        return None
    try:
        original = fix.original.replace(INDENT, "")
        if _code(node.with_changes(lpar=[], rpar=[]) if getattr(node, "lpar", None) else node).strip() != original:
            return None
        text = fix.replacement.replace(INDENT, "")
        if isinstance(node, cst.BaseSmallStatement):
            new = cst.parse_statement(text).body[0]
            return new if node is stmt else stmt.deep_replace(node, new)
        return stmt.deep_replace(node, cst.parse_expression(text))
    except Exception:  # a fix that does not fit this statement: use the rule's rewrite below
        return None


def rewrite(code: str, stmt: Optional[cst.CSTNode], node: Optional[cst.CSTNode], line: int, col: int,
            fix=None) -> dict:
    """``{"src", "line", "col", "compound"}`` of the rewritten statement, or ``{"none": reason}``.
    ``fix``: the finding's autofix (``--fix``), checked in place of the rule's rewrite when it
    is local to the statement."""
    if stmt is None:
        return {"none": "no statement"}
    if isinstance(stmt, cst.BaseSmallStatement):
        fixed = _autofix(stmt, node, fix)
        if fixed is not None:
            src = _code(fixed).strip()
            return {"src": src[:-1] if src.endswith(";") else src, "line": line, "col": col, "compound": False,
                    "autofix": True}
    fn = REWRITES.get(code)
    if fn is None:
        return {"none": NO_REWRITE.get(code, f"{code} has no statement-local rewrite")}
    if not isinstance(stmt, cst.BaseSmallStatement):
        return {"none": "the finding is in a compound statement's header"}
    try:
        got = fn(stmt, node)
    except Exception as exc:  # a rewrite must never break the run
        return {"none": f"rewrite failed: {type(exc).__name__}: {exc}"}
    if isinstance(got, str):
        return {"none": got}
    src = _code(got).strip()
    if src.endswith(";"):
        src = src[:-1]
    return {"src": src, "line": line, "col": col, "compound": False}
