"""How often a line runs when its function runs: every step, periodically, on an error path, once.

A sync in ``if step % 100 == 0: log(loss.item())`` costs one stall in a hundred steps; one in an
``except`` block or in a branch that ends in ``raise`` costs nothing until something fails; one
in ``if self._cache is None: self._cache = ...`` happens on the first call only. Findings carry
the class of the innermost such block (the branch's test itself still runs every step), and the
default report shows the every-step ones.

Classes, most specific wins: ``error-path`` (``except`` handlers, branches ending in ``raise``,
``assert`` messages), ``once`` (first-call caching: ``if X is None:`` that assigns X,
``if not hasattr(obj, "a"):``, ``if k not in cache:`` that stores ``cache[k]``), ``periodic``
(a branch whose test takes a remainder: ``step % N == 0``). Set-up code (``__init__``, module
level) and test files are classed by the engine, from the function and the path.
"""

from __future__ import annotations

from typing import Dict, List

import libcst as cst

from torchsync_lint.inference.names import dotted
from torchsync_lint.syntax.walk import iter_children

EVERY_STEP = "every-step"
PERIODIC = "periodic"
ERROR_PATH = "error-path"
ONCE = "once"
TEST = "test"
CLASSES = (EVERY_STEP, PERIODIC, ONCE, ERROR_PATH, TEST)
_RANK = {EVERY_STEP: 0, PERIODIC: 1, ONCE: 2, ERROR_PATH: 3}


def _takes_remainder(test: cst.BaseExpression) -> bool:
    stack: List[cst.CSTNode] = [test]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo):
            if not isinstance(n.left, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
                return True
        if isinstance(n, (cst.Lambda, cst.Call)):
            continue  # `%` inside a call's arguments is not the branch's own test
        stack.extend(iter_children(n))
    return False


def _assigned(body: cst.BaseSuite) -> set:
    """Dotted names and subscript bases assigned anywhere in a block."""
    out = set()
    stack: List[cst.CSTNode] = [body]
    while stack:
        n = stack.pop()
        targets = []
        if isinstance(n, cst.Assign):
            targets = [t.target for t in n.targets]
        elif isinstance(n, (cst.AnnAssign, cst.AugAssign)):
            targets = [n.target]
        for t in targets:
            if isinstance(t, cst.Subscript):
                out.add(("item", dotted(t.value)))
            else:
                out.add(("name", dotted(t)))
        if not isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            stack.extend(iter_children(n))
    return out


def _first_call_cache(test: cst.BaseExpression, body: cst.BaseSuite) -> bool:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression
        if isinstance(inner, cst.Call) and dotted(inner.func) == "hasattr":
            return True
        return False
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        left = dotted(test.left)
        if left is None:
            return False
        is_none = isinstance(comp.comparator, cst.Name) and comp.comparator.value == "None"
        if isinstance(comp.operator, cst.Is) and is_none:
            return ("name", left) in _assigned(body)
        if isinstance(comp.operator, cst.NotIn):
            return ("item", dotted(comp.comparator)) in _assigned(body)
    return False


def _ends_in_raise(body: cst.BaseSuite) -> bool:
    stmts = body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, cst.Raise) for s in last.body)
    return isinstance(last, cst.Raise)


class FrequencyTracker:
    """Kept current by the rule walker: ``enter``/``leave`` for every ``If``, ``ExceptHandler``,
    ``Assert`` and block; ``of(node)`` for the class of a reported node."""

    def __init__(self) -> None:
        self._blocks: Dict[int, str] = {}  # id(block) -> class, registered by its If
        self._stack: List[str] = []
        self._assert_msgs: set = set()

    def enter_if(self, node: cst.If) -> None:
        cls = None
        if _ends_in_raise(node.body):
            cls = ERROR_PATH
        elif _first_call_cache(node.test, node.body):
            cls = ONCE
        elif _takes_remainder(node.test):
            cls = PERIODIC
        if cls is not None:
            self._blocks[id(node.body)] = cls
        orelse = node.orelse
        if isinstance(orelse, cst.Else) and _ends_in_raise(orelse.body):
            self._blocks[id(orelse.body)] = ERROR_PATH

    def enter_block(self, node: cst.CSTNode) -> None:
        cls = self._blocks.pop(id(node), None)
        outer = self._stack[-1] if self._stack else EVERY_STEP
        self._stack.append(combine(outer, cls) if cls else outer)

    def leave_block(self, node: cst.CSTNode) -> None:
        if self._stack:
            self._stack.pop()

    def enter_handler(self, node: cst.ExceptHandler) -> None:
        self._blocks[id(node.body)] = ERROR_PATH

    def enter_assert(self, node: cst.Assert) -> None:
        if node.msg is not None:
            stack: List[cst.CSTNode] = [node.msg]
            while stack:
                n = stack.pop()
                self._assert_msgs.add(id(n))
                stack.extend(iter_children(n))

    def of(self, node: cst.CSTNode) -> str:
        if id(node) in self._assert_msgs:
            return ERROR_PATH
        return self._stack[-1] if self._stack else EVERY_STEP

    def enter_function(self) -> None:
        self._stack.append(EVERY_STEP)  # a nested def runs when called, not when defined

    def leave_function(self) -> None:
        if self._stack:
            self._stack.pop()


def combine(outer: str, inner: str) -> str:
    return inner if _RANK.get(inner, 0) >= _RANK.get(outer, 0) else outer
