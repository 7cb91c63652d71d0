"""Snippet mode, parent side: where a finding sits in its file.

The innermost small statement or compound-statement header (``if``/``while``/``for``/``with``)
holding the finding's start, the flagged expression inside it, and whether that expression sits in
a lambda, a generator expression or an assignment target. Two ways to the same answer:

- ``AstLocator`` (the default): Python's own parser gives every statement's and expression's
  range at C speed, and each statement's LibCST node is the one at the same place in the statement
  lists of both trees (walked side by side). No LibCST position metadata is computed, which was
  more than half of the extraction's time.
- ``PositionLocator``: LibCST's ``PositionProvider`` over the whole file, when the syntax nodes of
  the flagged expression are wanted (``--verify-fixes`` rewrites them) or the two trees disagree.

Columns are code points, as in findings (``ast`` counts UTF-8 bytes: converted per line).
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, Optional, Tuple

import libcst as cst

COMPOUND = (cst.If, cst.While, cst.For, cst.With)
Pos = Tuple[int, int]


def slice_text(lines: List[str], start: Pos, end: Pos) -> str:
    (l1, c1), (l2, c2) = start, end
    if l1 == l2:
        return lines[l1 - 1][c1:c2]
    parts = [lines[l1 - 1][c1:]] + lines[l1:l2 - 1] + [lines[l2 - 1][:c2]]
    return "".join(parts)


class Located:
    """One finding's place: its statement (a LibCST node), where the statement starts and ends (a
    compound statement: where its body starts), the flagged expression's context, and its node
    (only from ``PositionLocator``)."""

    __slots__ = ("stmt", "start", "end", "compound", "where", "node")

    def __init__(self, stmt, start: Pos, end: Pos, compound: bool) -> None:
        self.stmt, self.start, self.end, self.compound = stmt, start, end, compound
        self.where: Optional[List[str]] = None  # None: the flagged range is no expression of the statement
        self.node: Optional[cst.CSTNode] = None


def _innermost(statements, line: int, col: int):
    best, best_size = None, None
    for start, end, *rest in statements:
        if not (start <= (line, col) < end or start == (line, col)):
            continue
        size = (end[0] - start[0]) * 100_000 + (end[1] - start[1])
        if best_size is None or size < best_size:
            best, best_size = (start, end, *rest), size
    return best


# ---------------------------------------------------------------------------------------------
# ast: statements by Python's parser, paired with LibCST's


class _Mismatch(Exception):
    """The two trees' statement lists differ: locate with LibCST positions instead."""


_CST_NAME = {
    "FunctionDef": "FunctionDef", "AsyncFunctionDef": "FunctionDef", "ClassDef": "ClassDef", "Return": "Return",
    "Delete": "Del", "Assign": "Assign", "AugAssign": "AugAssign", "AnnAssign": "AnnAssign", "For": "For",
    "AsyncFor": "For", "While": "While", "If": "If", "With": "With", "AsyncWith": "With", "Match": "Match",
    "Raise": "Raise", "Try": "Try", "TryStar": "TryStar", "Assert": "Assert", "Import": "Import",
    "ImportFrom": "ImportFrom", "Global": "Global", "Nonlocal": "Nonlocal", "Expr": "Expr", "Pass": "Pass",
    "Break": "Break", "Continue": "Continue", "TypeAlias": "TypeAlias",
}
_AST_COMPOUND = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _block(body) -> list:
    """The statements of a LibCST block (indented or on the header's line), small ones unpacked."""
    out = []
    for s in body.body:
        if isinstance(s, cst.SimpleStatementLine):
            out.extend(s.body)
        else:
            out.append(s)
    return out


class AstLocator:
    def __init__(self, module: cst.Module, source: str, lines: List[str]) -> None:
        self.lines = lines
        self._ascii: Dict[int, bool] = {}
        self.statements: List[tuple] = []  # (start, end, ast node, cst node, compound)
        self.to_ast: Dict[int, ast.AST] = {}  # id(LibCST statement) -> its ast statement
        self.ok = True
        try:
            tree = ast.parse(source)
            self._pair(tree.body, _block(module))
        except (_Mismatch, SyntaxError, ValueError, RecursionError, MemoryError, AttributeError, IndexError):
            self.ok = False

    # -- positions ----------------------------------------------------------------------------
    def col(self, line: int, byte_col: int) -> int:
        ascii_line = self._ascii.get(line)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if ascii_line is None:
            ascii_line = self._ascii[line] = text.isascii()
        if ascii_line:
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def start(self, node) -> Pos:
        return node.lineno, self.col(node.lineno, node.col_offset)

    def end(self, node) -> Pos:
        return node.end_lineno, self.col(node.end_lineno, node.end_col_offset)

    def _body_start(self, first) -> Pos:
        """Where a compound statement's body starts: its first statement (a decorated one at '@')."""
        decos = getattr(first, "decorator_list", None)
        if decos:
            d = decos[0]
            text = self.lines[d.lineno - 1] if d.lineno <= len(self.lines) else ""
            col = self.col(d.lineno, d.col_offset)
            at = text.rfind("@", 0, col + 1)
            return d.lineno, at if at >= 0 else max(col - 1, 0)
        return self.start(first)

    # -- the two trees side by side -----------------------------------------------------------
    def _pair(self, nodes: list, cst_nodes: list) -> None:
        if len(nodes) != len(cst_nodes):
            raise _Mismatch
        for a, c in zip(nodes, cst_nodes):
            if _CST_NAME.get(type(a).__name__) != type(c).__name__:
                raise _Mismatch
            self.to_ast[id(c)] = a
            if isinstance(a, _AST_COMPOUND):
                self.statements.append((self.start(a), self._body_start(a.body[0]), a, c, True))
            elif not isinstance(a, _SCOPES + (ast.Try, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())):
                self.statements.append((self.start(a), self.end(a), a, c, False))
            self._children(a, c)

    def _children(self, a, c) -> None:
        if isinstance(a, (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())):
            self._pair(a.body, _block(c.body))
            if len(a.handlers) != len(c.handlers):
                raise _Mismatch
            for ha, hc in zip(a.handlers, c.handlers):
                self._pair(ha.body, _block(hc.body))
            self._pair(a.orelse, _block(c.orelse.body) if c.orelse is not None else [])
            self._pair(a.finalbody, _block(c.finalbody.body) if c.finalbody is not None else [])
            return
        if isinstance(a, ast.Match):
            if len(a.cases) != len(c.cases):
                raise _Mismatch
            for ca, cc in zip(a.cases, c.cases):
                self._pair(ca.body, _block(cc.body))
            return
        if not hasattr(a, "body") or not isinstance(a.body, list):
            return
        self._pair(a.body, _block(c.body))
        if isinstance(a, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            orelse = c.orelse
            if orelse is None:
                self._pair(a.orelse, [])
            elif isinstance(orelse, cst.If):  # elif
                self._pair(a.orelse, [orelse])
            else:
                self._pair(a.orelse, _block(orelse.body))

    # -- questions ----------------------------------------------------------------------------
    def statement_for(self, line: int, col: int) -> Optional[Located]:
        got = _innermost(self.statements, line, col)
        if got is None:
            return None
        start, end, _, c, compound = got
        return Located(c, start, end, compound)

    def context(self, loc: Located, start: Pos, end: Pos) -> Optional[List[str]]:
        """The tags of the flagged expression's enclosing nodes inside the statement ("lambda",
        "generator", "store", "store?"), or None when no expression of the statement has exactly
        the finding's range (or the range is the statement's own)."""
        stmt = self.to_ast.get(id(loc.stmt))
        if stmt is None:
            return None
        roots = _header(stmt) if loc.compound else [stmt]
        for root in roots:
            found = self._find(root, start, end, [])
            if found is not None:
                return found
        return None

    def _find(self, node, start: Pos, end: Pos, tags: List[str]) -> Optional[List[str]]:
        if isinstance(node, ast.expr) and hasattr(node, "lineno"):
            s, e = self.start(node), self.end(node)
            if (s, e) == (start, end):
                return list(tags)
            if not (s <= start and end <= e):
                return None
            if isinstance(node, ast.Attribute) and e == end and start == (e[0], e[1] - len(node.attr)):
                return list(tags) + [""]  # the attribute's name (LibCST: a Name node of its own)
        elif isinstance(node, ast.keyword) and node.arg and hasattr(node, "lineno"):
            s = self.start(node)
            if (s, (s[0], s[1] + len(node.arg))) == (start, end):
                return list(tags) + [""]  # a keyword argument's name
        for field, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if not isinstance(child, ast.AST):
                    continue
                tag = _tag(node, field, child)
                got = self._find(child, start, end, tags + [tag])
                if got is not None:
                    return got
        return None


def _header(stmt) -> list:
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.target, stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return list(stmt.items)
    return [stmt]


def _tag(parent, field: str, child) -> str:
    """How LibCST's walk in ``_Inside`` labels what ``parent`` holds (a node is inside a lambda
    when one of its ancestors is the lambda, not when it is the lambda)."""
    if isinstance(parent, ast.Lambda):
        return "lambda"
    if isinstance(parent, ast.GeneratorExp):
        return "generator"
    if isinstance(parent, ast.Assign) and field == "targets":
        return "store"
    if isinstance(parent, (ast.AugAssign, ast.Delete)):
        return "store?"
    return ""


# ---------------------------------------------------------------------------------------------
# LibCST positions: the flagged expression's node too (rewrites need it)


class PositionLocator:
    """One pass over a file's LibCST positions: its statements (for the innermost one at a point)
    and its expressions by exact range."""

    ok = True

    def __init__(self, module: cst.Module) -> None:
        from libcst.metadata import MetadataWrapper, PositionProvider

        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        self.statements: List[tuple] = []
        self.by_range: Dict[Tuple[Pos, Pos], cst.CSTNode] = {}
        for node, rng in positions.items():
            start, end = (rng.start.line, rng.start.column), (rng.end.line, rng.end.column)
            if isinstance(node, (cst.BaseSmallStatement,) + COMPOUND):
                compound = isinstance(node, COMPOUND)
                if compound:
                    body = positions.get(node.body)
                    if body is not None:
                        end = (body.start.line, body.start.column)
                self.statements.append((start, end, node, compound))
            if isinstance(node, (cst.BaseExpression, cst.BaseSmallStatement)):
                self.by_range.setdefault((start, end), node)

    def statement_for(self, line: int, col: int) -> Optional[Located]:
        got = _innermost(self.statements, line, col)
        return Located(got[2], got[0], got[1], got[3]) if got is not None else None

    def context(self, loc: Located, start: Pos, end: Pos) -> Optional[List[str]]:
        node = self.by_range.get((start, end))
        loc.node = node
        if node is None or node is loc.stmt or not isinstance(node, cst.BaseExpression):
            return None
        inside = _Inside(node)
        loc.stmt.visit(inside)
        return inside.found or []


class _Inside(cst.CSTVisitor):
    """Is the flagged node a store target, or inside a lambda / generator expression?"""

    def __init__(self, target: cst.CSTNode) -> None:
        self.target = target
        self.stack: List[str] = []
        self.found: Optional[List[str]] = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found is not None:
            return False
        if node is self.target:
            self.found = list(self.stack)
            return False
        if isinstance(node, cst.Lambda):
            self.stack.append("lambda")
        elif isinstance(node, cst.GeneratorExp):
            self.stack.append("generator")
        elif isinstance(node, (cst.AssignTarget,)):
            self.stack.append("store")
        elif isinstance(node, (cst.AugAssign, cst.Del)):
            self.stack.append("store?")
        else:
            self.stack.append("")
        return True

    def on_leave(self, node: cst.CSTNode) -> None:
        if self.stack and self.found is None:
            self.stack.pop()


def locator(module: cst.Module, source: str, lines: List[str], nodes: bool = False):
    """``AstLocator`` unless the flagged nodes are wanted (or the trees disagree)."""
    if not nodes:
        fast = AstLocator(module, source, lines)
        if fast.ok:
            return fast
    return PositionLocator(module)


AstOf = Callable[[cst.CSTNode], Optional[ast.AST]]
