"""Where a sequence is known to be empty: the branch of a test on its length or truthiness.

``torch.stack(b) if len(b) > 0 else torch.tensor(b, device=d)``: in the ``else`` branch ``b`` holds
nothing, so the host tensor made from it moves no data (as ``torch.tensor([], device=d)``).
"""

from __future__ import annotations

from typing import Set, Tuple

import libcst as cst

from torchsync_lint.rules._common import collect_ids


# marks a name found falsy rather than of length 0 (a number is falsy too, and not empty)
TRUTH = "?"


def _len_of(e: cst.BaseExpression):
    """``len(name)`` -> name, else None."""
    if (type(e) is cst.Call and type(e.func) is cst.Name and e.func.value == "len" and len(e.args) == 1
            and type(e.args[0].value) is cst.Name):
        return e.args[0].value.value
    return None


def _int(e: cst.BaseExpression):
    return e.evaluated_value if type(e) is cst.Integer else None


# `len(b) == 0`, `len(b) < 1`, `len(b) <= 0` hold only when b is empty; `len(b) > 0`, `len(b) != 0`,
# `len(b) >= 1` fail only then
_EMPTY_IF_TRUE = {(cst.Equal, 0), (cst.LessThan, 1), (cst.LessThanEqual, 0)}
_EMPTY_IF_FALSE = {(cst.GreaterThan, 0), (cst.NotEqual, 0), (cst.GreaterThanEqual, 1)}


def empty_when(test: cst.BaseExpression) -> Tuple[Set[str], Set[str]]:
    """The names that are empty where ``test`` holds, and where it does not (``TRUTH`` + name:
    falsy)."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        when_true, when_false = empty_when(test.expression)
        return when_false, when_true
    if type(test) is cst.Name:
        # `x if b else ...`: b is falsy in the else (empty, if it is a sequence: the caller asks)
        return set(), {TRUTH + test.value}
    name = _len_of(test)
    if name is not None:
        return set(), {name}
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        name, op, n = _len_of(test.left), type(test.comparisons[0].operator), _int(test.comparisons[0].comparator)
        if name is None or n is None:
            return set(), set()
        if (op, n) in _EMPTY_IF_TRUE:
            return {name}, set()
        if (op, n) in _EMPTY_IF_FALSE:
            return set(), {name}
    return set(), set()


class EmptyBranches:
    """Remembers, per node id, the names a surrounding test says are empty there. Fed by a rule's
    ``visit_If`` / ``visit_IfExp`` (which run before the branches are visited)."""

    def __init__(self) -> None:
        self._empty: dict = {}

    def note(self, test: cst.BaseExpression, body, orelse) -> None:
        when_true, when_false = empty_when(test)
        for names, branch in ((when_true, body), (when_false, orelse)):
            if names and branch is not None:
                ids: set = set()
                collect_ids(branch, ids)
                for i in ids:
                    self._empty.setdefault(i, set()).update(names)

    def is_empty(self, node: cst.CSTNode, sequence: bool) -> bool:
        """``node`` is a plain name that its branch says is empty: by its length, or (``sequence``:
        it holds a list or tuple) by its truthiness."""
        if type(node) is not cst.Name:
            return False
        names = self._empty.get(id(node), ())
        return node.value in names or (sequence and TRUTH + node.value in names)
