"""A read-only tree walk, several times faster than ``node.visit(CSTVisitor)``.

LibCST's ``visit`` rebuilds (and re-validates) every node it passes, even for a visitor that
changes nothing, and looks its callbacks up by formatted name for every node and every field.
Here each node type gets a plan once: its child fields in LibCST's own visiting order (recorded
from LibCST itself) and the callbacks for that type. Whitespace and operator tokens are not
entered unless a callback asks for one of their types. Nodes are the original objects, met in
the same order as with ``node.visit``.
"""

from __future__ import annotations

import inspect
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import libcst as cst
from libcst._nodes import op as _op
from libcst._nodes import whitespace as _whitespace

_DEFAULT = cst.MaybeSentinel.DEFAULT
_FIELDS: Dict[type, Tuple[str, ...]] = {}
# Fields LibCST visits only when set (so a recording from an instance without them misses them);
# each comes last in its node's visiting order. Found by reading every _visit_and_replace_children.
_CONDITIONAL_LAST = {"FormattedStringExpression": "format_spec", "TemplatedStringExpression": "format_spec"}


def _node_classes(module) -> frozenset:
    return frozenset(
        c for c in vars(module).values()
        if inspect.isclass(c) and issubclass(c, cst.CSTNode) and c.__module__ == module.__name__
    )


# Tokens and layout: they never hold an expression or a statement.
TRIVIA: frozenset = _node_classes(_op) | _node_classes(_whitespace)


class _FieldRecorder(cst.CSTVisitor):
    def __init__(self, root: cst.CSTNode) -> None:
        self.root = root
        self.fields: List[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pass

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.root:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


def child_fields(node: cst.CSTNode) -> Tuple[str, ...]:
    """Names of the fields that hold child nodes, in LibCST's visiting order (per type, cached)."""
    t = type(node)
    got = _FIELDS.get(t)
    if got is None:
        recorder = _FieldRecorder(node)
        node._visit_and_replace_children(recorder)
        fields = list(dict.fromkeys(recorder.fields))
        last = _CONDITIONAL_LAST.get(t.__name__)
        if last is not None and last not in fields:
            fields.append(last)
        got = _FIELDS[t] = tuple(fields)
    return got


def iter_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The same nodes, in the same order, as ``node.children``, without rebuilding ``node``."""
    for name in _FIELDS.get(type(node)) or child_fields(node):
        child = getattr(node, name)
        if child is None or child is _DEFAULT:
            continue
        if type(child) is tuple or type(child) is list:
            yield from child
        else:
            yield child


def callbacks(visitor: object) -> Tuple[Dict[str, List[Callable]], Dict[str, List[Callable]]]:
    """``visit_<Type>`` and ``leave_<Type>`` methods a visitor defines (not LibCST's empty stubs)."""
    visits: Dict[str, List[Callable]] = {}
    leaves: Dict[str, List[Callable]] = {}
    seen = set()
    for klass in type(visitor).__mro__:
        if klass.__module__.startswith("libcst") or klass is object:
            continue
        for attr in vars(klass):
            if attr in seen:
                continue
            seen.add(attr)
            if attr.startswith("visit_"):
                visits.setdefault(attr[6:], []).append(getattr(visitor, attr))
            elif attr.startswith("leave_"):
                leaves.setdefault(attr[6:], []).append(getattr(visitor, attr))
    return visits, leaves


def merge(tables: Iterable[Dict[str, List[Callable]]]) -> Dict[str, List[Callable]]:
    out: Dict[str, List[Callable]] = {}
    for table in tables:
        for name, fns in table.items():
            out.setdefault(name, []).extend(fns)
    return out


class Walker:
    """Calls ``visits[TypeName]`` before a node's children and ``leaves[TypeName]`` after.

    With ``prune=True`` a visit callback that returns False skips the node's children, as in
    ``CSTVisitor``; otherwise return values are ignored. Attribute callbacks
    (``visit_Call_func``) are not supported.
    """

    def __init__(self, visits: Dict[str, Sequence[Callable]], leaves: Dict[str, Sequence[Callable]],
                 prune: bool = False) -> None:
        self.visits = visits
        self.leaves = leaves
        self.prune = prune
        handled = set(visits) | set(leaves)
        # Enter tokens only when a callback wants one of them (they can nest: comments in lines).
        self.skip = frozenset() if any(c.__name__ in handled for c in TRIVIA) else TRIVIA
        self._plans: Dict[type, tuple] = {}

    def _plan(self, node: cst.CSTNode) -> tuple:
        t = type(node)
        name = t.__name__
        plan = (tuple(self.visits.get(name, ())), tuple(self.leaves.get(name, ())), child_fields(node))
        self._plans[t] = plan
        return plan

    def walk(self, node: cst.CSTNode) -> None:
        plans = self._plans
        skip = self.skip
        prune = self.prune

        def walk(node: cst.CSTNode) -> None:
            plan = plans.get(type(node)) or self._plan(node)
            enter = True
            for fn in plan[0]:
                if fn(node) is False and prune:
                    enter = False
            if enter:
                for name in plan[2]:
                    child = getattr(node, name)
                    if child is None or child is _DEFAULT:
                        continue
                    ct = type(child)
                    if ct is tuple or ct is list:
                        for c in child:
                            if type(c) not in skip:
                                walk(c)
                    elif ct not in skip:
                        walk(child)
            for fn in plan[1]:
                fn(node)

        walk(node)


def visit(node: cst.CSTNode, visitor: object) -> None:
    """``node.visit(visitor)`` for a read-only visitor with ``visit_<Type>``/``leave_<Type>`` methods."""
    visits, leaves = callbacks(visitor)
    Walker(visits, leaves, prune=True).walk(node)
