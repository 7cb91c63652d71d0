"""The rule walk: every rule's callbacks and the inference context's bookkeeping in one traversal,
and where each reported node sits (for positions computed only for what is reported)."""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Tuple

import libcst as cst

from torchsync_lint.inference.branches import eager_false
from torchsync_lint.inference.context import FileContext
from torchsync_lint.inference.index import FileIndex, FunctionInfo
from torchsync_lint.syntax import walk

COMP_NODES = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


class RuleWalker(cst.CSTVisitor):
    """Calls every rule's visit_/leave_ methods from one traversal and keeps the context current.

    Callbacks are looked up per node type once (``walk.Walker``): the context's bookkeeping
    runs before the rules' visits and after their leaves. ``run(module)`` is the fast walk;
    ``module.visit(walker)`` gives the same calls through LibCST.
    """

    def __init__(self, ctx: FileContext, rules: Sequence) -> None:
        self.ctx = ctx
        freq = ctx.frequency
        pre: Dict[str, List[Callable]] = {
            "FunctionDef": [ctx.enter_function, lambda _node: freq.enter_function()],
            "If": [self._mark_dead, ctx.enter_orelse, ctx.enter_if, freq.enter_if],
            "Else": [ctx.enter_orelse],
            "IndentedBlock": [self._enter_block, freq.enter_block],
            "SimpleStatementSuite": [self._enter_block, freq.enter_block],
            "ExceptHandler": [freq.enter_handler],
            "ExceptStarHandler": [freq.enter_handler],
            "Assert": [freq.enter_assert],
            "With": [ctx.enter_with],
            "Assign": [self._assign_stores],
            "AugAssign": [self._target_store],
            "AnnAssign": [self._target_store],
            "For": [self._enter_for],
            "While": [self._mark_dead, ctx.enter_loop],
        }
        for comp in COMP_NODES:
            pre[comp.__name__] = [self._bind_comps]
        post: Dict[str, List[Callable]] = {
            "Assign": [self._bind_assign],
            "AnnAssign": [self._bind_annassign],
            "NamedExpr": [self._bind_named],
            "AugAssign": [self._bind_augassign],
            "FunctionDef": [ctx.leave_function, lambda _node: freq.leave_function()],
            "IndentedBlock": [freq.leave_block, self._leave_block],
            "SimpleStatementSuite": [freq.leave_block, self._leave_block],
            "With": [ctx.leave_with],
            "If": [ctx.leave_if],
            "Assert": [ctx.leave_assert],
            "For": [ctx.leave_loop],
            "While": [ctx.leave_loop],
        }
        # blocks that never run (`if 0:`, `if TYPE_CHECKING:`, `if torch.jit.is_scripting():`):
        # id -> how many findings there were on entry; what their rules report there is dropped
        self._dead: Dict[int, Optional[int]] = {}
        tables = [walk.callbacks(rule) for rule in rules]
        self.visits = walk.merge([pre] + [v for v, _ in tables])
        self.leaves = walk.merge([lv for _, lv in tables] + [post])

    def run(self, module: cst.Module) -> Dict[int, cst.CSTNode]:
        """Walk the module; return id(reported node) -> the top-level statement holding it."""
        findings = self.ctx.findings
        statements: Dict[int, cst.CSTNode] = {}
        done = 0

        def after_statement(stmt: cst.CSTNode) -> None:
            nonlocal done
            for raw in findings[done:]:
                statements[id(raw.node)] = stmt
            done = len(findings)

        walk.Walker(self.visits, self.leaves).walk_module(module, after_statement)
        return statements

    def on_visit(self, node: cst.CSTNode) -> bool:
        for fn in self.visits.get(type(node).__name__, ()):
            fn(node)
        return True

    def on_leave(self, node: cst.CSTNode) -> None:
        for fn in self.leaves.get(type(node).__name__, ()):
            fn(node)

    # -- the context's bookkeeping -----------------------------------------------------------
    def _mark_dead(self, node) -> None:
        qualify = self.ctx.aliases.qualify
        test = node.test
        if eager_false(test, qualify):
            self._dead[id(node.body)] = None
        elif (type(node) is cst.If and type(node.orelse) is cst.Else and type(test) is cst.UnaryOperation
              and type(test.operator) is cst.Not and eager_false(test.expression, qualify)):
            self._dead[id(node.orelse.body)] = None

    def _enter_block(self, node) -> None:
        if id(node) in self._dead:
            self._dead[id(node)] = len(self.ctx.findings)

    def _leave_block(self, node) -> None:
        start = self._dead.pop(id(node), None)
        if start is not None:
            del self.ctx.findings[start:]

    def _assign_stores(self, node: cst.Assign) -> None:
        self.ctx.mark_stores([t.target for t in node.targets])

    def _target_store(self, node) -> None:
        self.ctx.mark_stores([node.target])

    def _enter_for(self, node: cst.For) -> None:
        self.ctx.bind_for(node)
        self.ctx.enter_loop(node)

    def _bind_comps(self, node) -> None:
        comp = node.for_in
        while comp is not None:  # the element is visited before its for-clauses
            self.ctx.bind_comp(comp)
            comp = comp.inner_for_in

    def _bind_assign(self, node: cst.Assign) -> None:
        ctx = self.ctx
        value = ctx.value(node.value)
        for t in node.targets:
            ctx.bind(t.target, value)

    def _bind_annassign(self, node: cst.AnnAssign) -> None:
        ctx = self.ctx
        ctx.bind(node.target, ctx.evaluator.annotated(node.annotation.annotation, node.value, ctx.scope))

    def _bind_augassign(self, node: cst.AugAssign) -> None:
        if type(node.target) in (cst.Name, cst.Attribute):
            self.ctx.bind(node.target, self.ctx.value(self.ctx.evaluator.index.augmented[id(node)]))

    def _bind_named(self, node: cst.NamedExpr) -> None:
        self.ctx.bind(node.target, self.ctx.value(node.value))


def _function_place(module: cst.Module, info: FunctionInfo) -> Optional[Tuple[cst.CSTNode, str]]:
    """A function's def statement and the indentation of the blocks around it, when it sits
    directly in the bodies of its enclosing functions and classes, up to the module."""
    indents: List[str] = []
    node, scope = info.node, info.parent or info.cls
    while scope is not None:
        body = scope.node.body
        if type(body) is not cst.IndentedBlock or not any(s is node for s in body.body):
            return None  # e.g. a def under an `if`: its indentation is not known from here
        indents.append(module.default_indent if body.indent is None else body.indent)
        node = scope.node
        if isinstance(scope, FunctionInfo):
            scope = scope.parent or scope.cls
        else:
            scope = None  # a class: only top-level ones (classes do not record where they sit)
    if not any(s is node for s in module.body):
        return None
    return info.node, "".join(reversed(indents))


def places(module: cst.Module, index: FileIndex, findings, statements: Dict[int, cst.CSTNode]):
    """For each reported node, the statements to generate for its position, innermost first: the
    statement line holding it, its function, its top-level statement."""
    memo: Dict[str, Optional[Tuple[cst.CSTNode, str]]] = {}
    wanted: Dict[str, set] = {}
    for raw in findings:
        if raw.function is not None:
            if raw.function not in memo:
                info = index.functions.get(raw.function)
                memo[raw.function] = _function_place(module, info) if info is not None else None
            if memo[raw.function] is not None:
                wanted.setdefault(raw.function, set()).add(id(raw.node))
    lines: Dict[int, Tuple[cst.CSTNode, str]] = {}
    for function, ids in wanted.items():
        lines.update(_statement_lines(module, memo[function], ids))  # type: ignore[arg-type]
    places = {}
    for raw in findings:
        candidates = []
        line = lines.get(id(raw.node))
        if line is not None:
            candidates.append(line)
        if raw.function is not None and memo[raw.function] is not None:
            candidates.append(memo[raw.function])
        stmt = statements.get(id(raw.node))
        if stmt is not None:
            candidates.append((stmt, ""))
        places[id(raw.node)] = candidates
    return places


# statements whose bodies are indented blocks (a statement line inside takes their indentation)
_BLOCKS = frozenset((cst.FunctionDef, cst.ClassDef, cst.If, cst.Else, cst.For, cst.While, cst.With, cst.Try,
                     cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.IndentedBlock))


def _statement_lines(module: cst.Module, place: Tuple[cst.CSTNode, str],
                     wanted: set) -> Dict[int, Tuple[cst.CSTNode, str]]:
    """id of a wanted node -> the statement line holding it and that line's indentation, for the
    nodes of a function (``place``: its def and the indentation around it) that sit in a line
    reached through indented blocks only (else its indentation is not known from here)."""
    out: Dict[int, Tuple[cst.CSTNode, str]] = {}
    default = module.default_indent
    todo: List[Tuple[cst.CSTNode, str, Optional[Tuple[cst.CSTNode, str]]]] = [(place[0], place[1], None)]
    while todo and len(out) < len(wanted):
        node, indent, line = todo.pop()
        if line is not None and id(node) in wanted:
            out[id(node)] = line
        t = type(node)
        if t is cst.SimpleStatementLine:
            line = (node, indent)
        elif t is cst.IndentedBlock:
            indent += default if node.indent is None else node.indent
        elif line is None and t not in _BLOCKS:
            continue  # a header, decorator or one-line suite: no statement line of its own here
        todo.extend((child, indent, line) for child in reversed(list(walk.iter_children(node))))
    return out
