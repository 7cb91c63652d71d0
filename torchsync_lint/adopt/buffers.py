"""Constants a fix hoists into ``__init__`` as non-persistent buffers, placed with LibCST.

``Placer`` plans on the text the findings were reported on: which class each buffer goes into
(the innermost one around the finding), its name (``<target>_const`` after the name the value was
assigned to, unique in the class), and whether it can go there at all (an ``__init__`` without a
``super().__init__`` line cannot take one: registering a buffer before ``Module.__init__``
raises). The buffer's statement is built as LibCST nodes, the constant's own text parsed as an
expression. ``AddBuffersVisitor`` then inserts the planned statements into the text the fixes'
edits produced, as LibCST's codemod visitors do it for imports (``AddImportsVisitor``): planned in
a ``CodemodContext`` (``add_needed_buffer``), inserted by a ``ContextAwareTransformer``: after the
class's ``super().__init__(...)`` line, or in a new ``__init__`` at the top of the class (after its
docstring). Fixes rewrite expressions, never definitions, so a class is found in both texts by
its path (the names of the definitions around it, and how many of the same path came before).

LibCST's codemod package costs a second or more to import on a loaded machine: ``adopt.fixes``
imports this module only for a fix that hoists.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Dict, List, Optional, Tuple

import libcst as cst
from libcst.codemod import CodemodContext, ContextAwareTransformer
from libcst.metadata import MetadataWrapper, PositionProvider

_NO_SPACE = cst.SimpleWhitespace("")


class _Paths:
    """Names a definition by where it sits, the same way in the source and in the fixed text."""

    def __init__(self) -> None:
        self.stack: List[str] = []
        self.seen: Counter = Counter()

    def enter(self, node) -> tuple:
        self.stack.append(node.name.value)
        path = tuple(self.stack)
        self.seen[path] += 1
        return path + (self.seen[path],)

    def leave(self) -> None:
        self.stack.pop()


class _Survey(cst.CSTVisitor):
    """The source's classes (node, position, path) and, by the position where a value starts,
    the name it is given: ``w = v``, ``w: T = v``, ``f(w=v)``, ``def f(w=v)``."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        self.classes: List[Tuple[cst.ClassDef, object, tuple]] = []
        self.functions: List[Tuple[object, object]] = []  # (whole definition, body) positions
        self.names: Dict[Tuple[int, int], str] = {}
        self._paths = _Paths()

    def _name(self, value: Optional[cst.CSTNode], target: Optional[cst.CSTNode]) -> None:
        if value is not None and isinstance(target, cst.Name):
            start = self.get_metadata(PositionProvider, value).start
            self.names[(start.line, start.column)] = target.value

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append((node, self.get_metadata(PositionProvider, node), self._paths.enter(node)))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._paths.leave()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._paths.enter(node)
        self.functions.append((self.get_metadata(PositionProvider, node),
                               self.get_metadata(PositionProvider, node.body)))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._paths.leave()

    def visit_Assign(self, node: cst.Assign) -> None:
        self._name(node.value, node.targets[-1].target)  # ``a = b = v``: the nearest

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._name(node.value, node.target)

    def visit_Arg(self, node: cst.Arg) -> None:
        self._name(node.value, node.keyword)

    def visit_Param(self, node: cst.Param) -> None:
        self._name(node.default, node.name)


def _is_super_init(stmt: cst.CSTNode) -> bool:
    """``super().__init__(...)``, ``super(C, self).__init__(...)`` or ``Base.__init__(self, ...)``."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            f = small.value.func
            if isinstance(f, cst.Attribute) and f.attr.value == "__init__":
                return True
    return False


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def buffer_statement(name: str, expression: str) -> cst.SimpleStatementLine:
    """``self.register_buffer("<name>", <expression>, persistent=False)``. The expression's
    continuation lines are relative to the statement: LibCST indents them with the block."""
    call = cst.Call(
        func=cst.Attribute(cst.Name("self"), cst.Name("register_buffer")),
        args=[cst.Arg(cst.SimpleString(f'"{name}"')),
              cst.Arg(cst.parse_expression(expression)),
              cst.Arg(cst.Name("False"), keyword=cst.Name("persistent"),
                      equal=cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE))])
    return cst.SimpleStatementLine([cst.Expr(call)])


class Placer:
    """Which buffers go into each class (one new ``__init__`` per class at most), with names
    unique in the class; ``schedule`` hands them to ``AddBuffersVisitor`` once the fixes' edits
    are made."""

    def __init__(self, source: str) -> None:
        survey = _Survey()
        MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True).visit(survey)
        self.classes = survey.classes
        self.functions = survey.functions
        self.names = survey.names
        self.used: Dict[int, set] = {}
        self.pending: Dict[tuple, list] = {}  # class path -> [init params, buffer statements]

    def in_a_body(self, line: int, col: int) -> bool:
        """Whether ``line``/``col`` (1-based) lies in the body of the innermost function around
        it: ``self`` is bound there, not in the definition's defaults, annotations or decorators
        (``def forward(self, x, w=self.w_const)`` would fail when the class is defined)."""
        at = (line, col - 1)
        inner = None
        for whole, body in self.functions:
            if (whole.start.line, whole.start.column) <= at <= (whole.end.line, whole.end.column) and (
                    inner is None or (whole.start.line, whole.start.column) >= (inner[0].start.line, inner[0].start.column)):
                inner = (whole, body)
        return inner is not None and (inner[1].start.line, inner[1].start.column) <= at

    def innermost_class(self, line: int) -> Optional[Tuple[cst.ClassDef, tuple]]:
        best = None
        for node, rng, path in self.classes:
            if rng.start.line <= line <= rng.end.line and (best is None or rng.start.line >= best[1].start.line):
                best = (node, rng, path)
        return (best[0], best[2]) if best else None

    def buffer_name(self, cls: cst.ClassDef, line: int, col: int) -> str:
        """``<target>_const`` for a value that starts at ``line``/``col`` (1-based) and is assigned
        to a name, else ``const_tensor``; numbered until no word of the class's text (its code,
        strings and comments: ``register_buffer("w_const", ...)``, ``getattr(self, "w_const")``)
        and no buffer planned here is the same."""
        taken = self.used.setdefault(id(cls), set())
        text = cst.Module([]).code_for_node(cls)
        hint = self.names.get((line, col - 1), "").lstrip("_")
        base = f"{hint}_const" if hint else "const_tensor"
        name, n = base, 1
        while name in taken or re.search(rf"\b{re.escape(name)}\b", text):
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        return name

    def place(self, cls: cst.ClassDef, path: tuple, init_params: str, name: str, expression: str) -> bool:
        """Plan the buffer ``name`` holding ``expression`` (its text) in ``cls.__init__``; False if
        it cannot go there, or the expression does not parse alone."""
        if init_params not in INIT_PARAMS:
            return False
        try:
            statement = buffer_statement(name, expression)
        except (cst.ParserSyntaxError, RecursionError, ValueError):
            return False
        if path in self.pending:
            self.pending[path][1].append(statement)
            return True
        body = cls.body
        if not isinstance(body, cst.IndentedBlock) or not body.body:
            return False
        for stmt in body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
                block = stmt.body
                if not (isinstance(block, cst.IndentedBlock) and any(_is_super_init(s) for s in block.body)):
                    return False
        self.pending[path] = [init_params, [statement]]
        return True

    def schedule(self, context: CodemodContext) -> None:
        for path, (init_params, statements) in self.pending.items():
            AddBuffersVisitor.add_needed_buffers(context, path, init_params, statements)


class AddBuffersVisitor(ContextAwareTransformer):
    """Inserts the buffer statements planned in the context (``add_needed_buffers``) into each
    class's ``__init__``: after its ``super().__init__(...)`` line, or in a new
    ``__init__(self[, init params])`` at the top of the class, after its docstring."""

    CONTEXT_KEY = "AddBuffersVisitor"

    @staticmethod
    def add_needed_buffers(context: CodemodContext, path: tuple, init_params: str,
                           statements: List[cst.SimpleStatementLine]) -> None:
        pending = context.scratch.setdefault(AddBuffersVisitor.CONTEXT_KEY, {})
        pending.setdefault(path, [init_params, []])[1].extend(statements)

    def __init__(self, context: CodemodContext) -> None:
        super().__init__(context)
        self.pending: Dict[tuple, list] = context.scratch.get(self.CONTEXT_KEY, {})
        self._paths = _Paths()
        self._current: List[tuple] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._current.append(self._paths.enter(node))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._paths.enter(node)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._paths.leave()
        return updated

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._paths.leave()
        plan = self.pending.get(self._current.pop())
        if plan is None or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        init_params, added = plan
        body = list(updated.body.body)
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__" \
                    and isinstance(stmt.body, cst.IndentedBlock):
                inner = list(stmt.body.body)
                at = next(j for j, s in enumerate(inner) if _is_super_init(s)) + 1
                inner[at:at] = added
                body[i] = stmt.with_changes(body=stmt.body.with_changes(body=inner))
                return updated.with_changes(body=updated.body.with_changes(body=body))
        init = _new_init(init_params, added)
        if body and _is_docstring(body[0]):
            body.insert(1, init.with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
        else:
            if body:
                blank = [cst.EmptyLine(indent=False)]
                body[0] = body[0].with_changes(leading_lines=blank + list(body[0].leading_lines))
            body.insert(0, init)
        return updated.with_changes(body=updated.body.with_changes(body=body))


INIT_PARAMS = ("", "*args, **kwargs")  # what a new ``__init__`` may take (``rules._fixes.init_params``)


def _new_init(init_params: str, added: List[cst.SimpleStatementLine]) -> cst.FunctionDef:
    """``def __init__(self[, *args, **kwargs]):`` calling ``super().__init__([*args, **kwargs])``,
    then ``added``."""
    passed = init_params == INIT_PARAMS[1]
    params = cst.Parameters(
        params=[cst.Param(cst.Name("self"))],
        star_arg=cst.Param(cst.Name("args")) if passed else cst.MaybeSentinel.DEFAULT,
        star_kwarg=cst.Param(cst.Name("kwargs")) if passed else None)
    super_args = [cst.Arg(cst.Name("args"), star="*"), cst.Arg(cst.Name("kwargs"), star="**")] if passed else []
    super_init = cst.SimpleStatementLine([cst.Expr(cst.Call(
        func=cst.Attribute(cst.Call(cst.Name("super")), cst.Name("__init__")), args=super_args))])
    return cst.FunctionDef(name=cst.Name("__init__"), params=params,
                           body=cst.IndentedBlock([super_init, *added]))
