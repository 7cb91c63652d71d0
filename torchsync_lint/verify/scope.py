"""Snippet mode, parent side: the names a flagged statement reads, and its function's own names.

``Names`` walks the statement (or a compound statement's header) for the names and ``self.attr``
reads it makes, with how each is used (indexed, a mask, a size, a loss target, host data, only
formatted into text, ...): the child synthesises values to fit. ``local_names`` says which names
are local to the enclosing functions (parameters, assignments, loop targets, local imports, nested
definitions): only those are synthesised; the others come from the imported module.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchsync_lint.catalog import training_utils
from torchsync_lint.inference.index import FunctionInfo
from torchsync_lint.inference.names import dotted
from torchsync_lint.verify.locate import AstOf

LOSS_TARGET_FUNCS = {
    "cross_entropy", "nll_loss", "one_hot", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "ctc_loss",
}
SIZE_FACTORIES = {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "eye", "linspace"}
SIZE_METHODS = {"narrow", "new_zeros", "new_ones", "new_empty", "view", "reshape", "expand", "repeat"}
SEQ_FUNCS = {"cat", "stack", "concat", "concatenate", "hstack", "vstack", "dstack", "block_diag", "cartesian_prod"}
HOST_DATA_FACTORIES = {"torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.LongTensor", "torch.FloatTensor",
                       "torch.IntTensor", "torch.BoolTensor", "torch.asarray", "torch.from_numpy"}


_MASK_OPERATORS = (cst.BitAnd, cst.BitOr, cst.BitXor)


def _mask_expression(e: cst.BaseExpression) -> bool:
    return (isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.BitInvert)
            or isinstance(e, cst.BinaryOperation) and isinstance(e.operator, _MASK_OPERATORS))


def _mask_operands(e: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The names a mask expression inverts or combines (``~a & (b | c)``: a, b, c)."""
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.BitInvert):
        return _mask_operands(e.expression)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, _MASK_OPERATORS):
        return _mask_operands(e.left) + _mask_operands(e.right)
    return [e]


class Names(cst.CSTVisitor):
    """Name and ``self.attr`` reads in a statement, with how each is used."""

    def __init__(self, aliases) -> None:
        self.names: Dict[str, List[cst.Name]] = {}
        self.self_attrs: Dict[str, List[cst.Attribute]] = {}
        self.roles: Dict[str, Set[str]] = {}
        self.aliases = aliases

    def _key(self, node: cst.BaseExpression) -> Optional[str]:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            return "self." + node.attr.value
        return None

    def _role(self, node: cst.BaseExpression, role: str) -> None:
        key = self._key(node)
        if key is not None:
            self.roles.setdefault(key, set()).add(role)

    def visit_Name(self, node: cst.Name) -> None:
        self.names.setdefault(node.value, []).append(node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            self.self_attrs.setdefault(node.attr.value, []).append(node)
        node.value.visit(self)
        return False  # the attribute's own name is not a variable

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False  # skip the keyword's name

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._role(node.value, "subscripted")
        for el in node.slice:
            sl = el.slice
            if isinstance(sl, cst.Index):
                v = sl.value
                items = [e.value for e in v.elements] if isinstance(v, cst.Tuple) else [v]
                for item in items:
                    if isinstance(item, cst.SimpleString):
                        self._role(node.value, "str_key")
                    elif isinstance(item, cst.Subscript):
                        self._role(item.value, "index_values")  # `x[y[mask]]`: y holds indices
                    elif _mask_expression(item):
                        for leaf in _mask_operands(item):
                            self._role(leaf, "mask")  # `x[~keep]`, `x[valid & hit]`: masks inverted or combined
                    else:
                        self._role(item, "index")
            elif isinstance(sl, cst.Slice):
                for part in (sl.lower, sl.upper, sl.step):
                    if part is not None:
                        self._mark_all(part, "scalar")

    def _mark_all(self, expr: cst.CSTNode, role: str) -> None:
        """Every name in ``expr`` that is not itself indexed (``t`` in ``t - box[1]``)."""
        outer = self

        class V(cst.CSTVisitor):
            def visit_Subscript(self, node):
                el = node.slice[0].slice if len(node.slice) == 1 else None
                if isinstance(el, cst.Index) and isinstance(el.value, cst.Integer):
                    outer._role(node.value, "int_vector")  # `box[1]` in a size or bound: box holds ints
                return False

            def visit_Attribute(self, node):
                outer._role(node, role)
                return False

            def visit_Call(self, node):
                return False

            def visit_Name(self, node):
                outer._role(node, role)

        expr.visit(V())

    def visit_Call(self, node: cst.Call) -> None:
        self._role(node.func, "called")
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in training_utils.writer_methods():
            self._role(node.func.value, "writer")  # `writer.add_scalar(tag, v, step)`: a SummaryWriter
        for a in node.args:
            if a.keyword is not None and a.keyword.value == "device":
                self._role(a.value, "device")
        q = self.aliases.qualify(node.func) or ""
        if q in ("builtins.int", "builtins.float", "builtins.bool", "builtins.range") and node.args:
            for a in node.args:
                self._mark_all(a.value, "scalar")
        if q.split(".")[-1] in SIZE_FACTORIES and q.startswith("torch."):
            for a in node.args:
                if a.keyword is None or a.keyword.value == "size":
                    self._mark_all(a.value, "scalar")
        if q.split(".")[-1] in SEQ_FUNCS and q.startswith("torch.") and node.args:
            self._role(node.args[0].value, "seq")
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in SIZE_METHODS:
            for a in node.args:
                self._mark_all(a.value, "scalar")
        last = q.split(".")[-1] if q else (node.func.attr.value if isinstance(node.func, cst.Attribute) else "")
        positional = [a for a in node.args if a.keyword is None]
        if last in LOSS_TARGET_FUNCS or last.lower().endswith("loss"):
            target = next((a.value for a in node.args if a.keyword and a.keyword.value == "target"), None)
            if target is None and len(positional) > 1:
                target = positional[1].value
            if target is not None and last != "one_hot":
                self._role(target, "target")
            if last == "one_hot" and positional:
                self._role(positional[0].value, "target")
        if q in HOST_DATA_FACTORIES and positional:
            self._role(positional[0].value, "host_data")
        if isinstance(node.func, cst.Attribute):
            self._role(node.func.value, "receiver")
            if node.func.attr.value == "item" and not node.args:
                self._mark_all(node.func.value, "scalar")

    def visit_For(self, node: cst.For) -> None:
        self._role(node.iter, "iterated")

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self._mark_all(node.expression, "formatted")  # `f"{self.target}_id"`: text, most likely
        if node.format_spec:
            # `f"{loss:.3f}"`: a number's format; a tensor formatted so is one element (0-dim)
            self._mark_all(node.expression, "scalar")

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._role(node.iter, "iterated")


_LOCALS_CACHE: Dict[int, Tuple[object, Tuple[Set[str], Dict[str, str], Set[str]]]] = {}


def local_names(func: Optional[FunctionInfo], ast_of: Optional[AstOf] = None,
                source: str = "") -> Tuple[Set[str], Dict[str, str], Set[str]]:
    """Names local to the function and its enclosing functions; local imports; nested defs.
    Cached per function node (several findings in one function share the walk). With ``ast_of``
    (the locator's LibCST-to-ast statement map) and the file's ``source``, each scope is walked in
    Python's own tree, much faster than a LibCST visitor."""
    if func is None:
        return set(), {}, set()
    got = _LOCALS_CACHE.get(id(func.node))
    if got is not None and got[0] is func.node:
        return got[1]
    out = _collect_local_names(func, ast_of, source)
    if len(_LOCALS_CACHE) > 4096:
        _LOCALS_CACHE.clear()
    _LOCALS_CACHE[id(func.node)] = (func.node, out)
    return out


def rebound_before(func: Optional[FunctionInfo], names: Set[str], line: int,
                   ast_of: Optional[AstOf] = None) -> Set[str]:
    """Those of ``names`` (parameters) that the function binds again before ``line``, or anywhere in
    a loop around it: at the statement they may no longer hold the values they entered with (what
    a recording of the function's entry saw). Without Python's tree of the function, any binding."""
    if func is None or not names:
        return set()
    fn = ast_of(func.node) if ast_of is not None else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        from torchsync_lint.inference.defs import bound_names

        return set(names) & set(bound_names(func))
    out: Set[str] = set()
    stack = [(stmt, False) for stmt in fn.body]
    while stack:
        node, looped = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            if isinstance(node, ast.Lambda):
                continue
            bound, at = {node.name}, node.lineno
        else:
            collector = _AstLocals("")
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor)):
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    collector._targets(t)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                collector._targets(node.optional_vars)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                collector.names.add(node.name)
            bound, at = collector.names, getattr(node, "lineno", line)
        if bound & names and (at < line or looped):
            out |= bound & names
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue  # another scope
        around = looped or (isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and
                            node.lineno <= line <= (node.end_lineno or node.lineno))
        stack.extend((child, around) for child in ast.iter_child_nodes(node))
    return out


def _collect_local_names(func: Optional[FunctionInfo], ast_of: Optional[AstOf] = None,
                         source: str = "") -> Tuple[Set[str], Dict[str, str], Set[str]]:
    names: Set[str] = set()
    imports: Dict[str, str] = {}
    nested: Set[str] = set()
    scope = func
    while scope is not None:
        fn = ast_of(scope.node) if ast_of is not None else None
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            collector = _AstLocals(source)
            collector.function(fn)
        else:
            collector = _Locals()
            scope.node.params.visit(collector)
            scope.node.body.visit(collector)
        names |= collector.names
        for k, v in collector.imports.items():
            imports.setdefault(k, v)
        nested |= collector.defs
        scope = scope.parent
    return names, imports, nested


class _Locals(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: Set[str] = set()
        self.imports: Dict[str, str] = {}
        self.defs: Set[str] = set()
        self._module = cst.Module([])

    def visit_Param(self, node: cst.Param) -> None:
        self.names.add(node.name.value)

    def _targets(self, t: cst.BaseExpression) -> None:
        if isinstance(t, cst.Name):
            self.names.add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                self._targets(el.value)
        elif isinstance(t, cst.StarredElement):
            self._targets(t.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._targets(node.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._targets(node.name.name)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = alias.asname.name.value if alias.asname else (dotted(alias.name) or "").split(".")[0]
            if name:
                self.names.add(name)
                self.imports[name] = self._module.code_for_node(node).strip()

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = alias.asname.name.value if alias.asname else (dotted(alias.name) or "")
            if name:
                self.names.add(name)
                self.imports[name] = self._module.code_for_node(node).strip()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        self.defs.add(node.name.value)
        return False  # its body is another scope

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        self.defs.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_CompFor(self, node: cst.CompFor) -> bool:
        return True  # comprehension targets are their own scope; walrus inside still binds


class _AstLocals:
    """``_Locals`` over Python's own tree: the same names, imports and nested definitions."""

    def __init__(self, source: str) -> None:
        self.names: Set[str] = set()
        self.imports: Dict[str, str] = {}
        self.defs: Set[str] = set()
        self.source = source

    def function(self, fn) -> None:
        a = fn.args
        for arg in list(a.posonlyargs) + list(a.args) + list(a.kwonlyargs) + [x for x in (a.vararg, a.kwarg) if x]:
            self.names.add(arg.arg)
        for default in list(a.defaults) + [d for d in a.kw_defaults if d is not None]:
            self.walk(default)
        for stmt in fn.body:
            self.walk(stmt)

    def _targets(self, t) -> None:
        if isinstance(t, ast.Name):
            self.names.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for el in t.elts:
                self._targets(el)
        elif isinstance(t, ast.Starred):
            self._targets(t.value)

    def walk(self, node) -> None:
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.names.add(n.name)
                self.defs.add(n.name)
                continue  # its body is another scope
            if isinstance(n, ast.Lambda):
                continue
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    self._targets(t)
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For, ast.AsyncFor)):
                self._targets(n.target)
            elif isinstance(n, ast.withitem) and n.optional_vars is not None:
                self._targets(n.optional_vars)
            elif isinstance(n, ast.ExceptHandler) and n.name:
                self.names.add(n.name)
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                self._import(n)
                continue
            stack.extend(ast.iter_child_nodes(n))

    def _import(self, node) -> None:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return
        text = (ast.get_source_segment(self.source, node) or "").strip()
        for alias in node.names:
            if alias.asname:
                name = alias.asname
            elif isinstance(node, ast.Import):
                name = alias.name.split(".")[0]
            else:
                name = alias.name
            if name:
                self.names.add(name)
                self.imports[name] = text
