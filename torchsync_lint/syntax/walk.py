"""A read-only tree walk, several times faster than ``node.visit(CSTVisitor)``.

LibCST's ``visit`` rebuilds (and re-validates) every node it passes, even for a visitor that
changes nothing, and looks its callbacks up by formatted name for every node and every field.
Here each node type gets a plan once: its child fields in LibCST's own visiting order (recorded
from LibCST itself) and the callbacks for that type. Subtrees made only of tokens and layout
(whitespace, operators, commas, a Name with its parentheses) are not entered unless a callback
asks for a type inside them. Nodes are the original objects, met in the same order as with
``node.visit``.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

_DEFAULT = cst.MaybeSentinel.DEFAULT
_FIELDS: Dict[type, Tuple[str, ...]] = {}
# Fields LibCST visits only when set (so a recording from an instance without them misses them);
# each comes last in its node's visiting order. Found by reading every _visit_and_replace_children.
_CONDITIONAL_LAST = {"FormattedStringExpression": "format_spec", "TemplatedStringExpression": "format_spec"}


def _concrete_node_classes() -> List[type]:
    """Every node class LibCST exports (its public namespace: no private module is imported)."""
    return [c for c in vars(cst).values()
            if inspect.isclass(c) and issubclass(c, cst.CSTNode) and not inspect.isabstract(c)]


def _node_types_in(annotation, subclasses: Callable[[type], frozenset]) -> Optional[Set[type]]:
    """Concrete node classes a field annotation admits; None when it cannot be read."""
    found: Set[type] = set()
    todo = [annotation]
    while todo:
        t = todo.pop()
        if t is None or t is type(None):
            continue
        args = typing.get_args(t)
        if args:
            todo.extend(args)
        elif inspect.isclass(t):
            if issubclass(t, cst.CSTNode):
                found |= subclasses(t)
        elif isinstance(t, (str, typing.ForwardRef)):
            return None
    return found


def _inert_classes() -> Tuple[Dict[type, frozenset], Dict[type, Dict[str, frozenset]]]:
    """Node classes whose whole subtree is tokens and layout (a Name and its parentheses, a
    comma and its whitespace), each with every class that can occur in its subtree; and per
    class, the classes each field admits. Worked out from LibCST's field annotations; a class
    whose annotations cannot be read is never inert, a field that cannot be read is not listed."""
    concrete = _concrete_node_classes()
    below: Dict[type, Set[type]] = {}  # class -> its concrete subclasses (by MRO: no ABC checks)
    for c in concrete:
        for base in c.__mro__:
            below.setdefault(base, set()).add(c)

    def subclasses(t: type) -> frozenset:
        return frozenset(below.get(t, ()))

    children: Dict[type, Optional[Set[type]]] = {}
    fields: Dict[type, Dict[str, frozenset]] = {}
    for c in concrete:
        fields[c] = {}
        try:
            types = {f.name: f.type for f in dataclasses.fields(c)}
            if any(isinstance(t, str) for t in types.values()):  # postponed annotations
                types = typing.get_type_hints(c, vars(sys.modules[c.__module__]))
            kinds: Optional[Set[type]] = set()
            for name, t in types.items():
                got = _node_types_in(t, subclasses)
                if got is None:
                    kinds = None
                    continue
                fields[c][name] = frozenset(got)
                if kinds is not None:
                    kinds |= got
        except Exception:
            kinds = None
        children[c] = kinds
    # leaves (no child node) are inert; so is every class whose children all are
    inert: Set[type] = set()
    changed = True
    while changed:
        changed = False
        for c, kinds in children.items():
            if c not in inert and kinds is not None and kinds <= inert:
                inert.add(c)
                changed = True
    reach: Dict[type, frozenset] = {}
    for c in inert:
        seen, todo = {c}, [c]
        while todo:
            for k in children[todo.pop()] or ():
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
        reach[c] = frozenset(seen)
    return reach, fields


_INERT: Optional[Tuple[Dict[type, frozenset], Dict[type, Dict[str, frozenset]]]] = None


def inert_classes() -> Dict[type, frozenset]:
    """class -> every class that can occur in its subtree, for classes that never hold an
    expression or a statement: a walk with no callback for any of them does not enter them."""
    global _INERT
    if _INERT is None:
        _INERT = _inert_classes()
    return _INERT[0]


def field_classes(t: type) -> Dict[str, frozenset]:
    """field -> the node classes it admits, for the fields of ``t`` whose annotation is readable."""
    inert_classes()
    return _INERT[1].get(t, {})


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


# visitor class -> its (visit?, node type name, method name), in definition order: read once per class
_CALLBACK_NAMES: Dict[type, Tuple[Tuple[bool, str, str], ...]] = {}


def _callback_names(klass: type) -> Tuple[Tuple[bool, str, str], ...]:
    got = _CALLBACK_NAMES.get(klass)
    if got is None:
        names = []
        seen = set()
        for k in klass.__mro__:
            if k.__module__.startswith("libcst") or k is object:
                continue
            for attr in vars(k):
                if attr in seen:
                    continue
                seen.add(attr)
                if attr.startswith(("visit_", "leave_")):
                    names.append((attr.startswith("visit_"), attr[6:], attr))
        got = _CALLBACK_NAMES[klass] = tuple(names)
    return got


def callbacks(visitor: object) -> Tuple[Dict[str, List[Callable]], Dict[str, List[Callable]]]:
    """``visit_<Type>`` and ``leave_<Type>`` methods a visitor defines (not LibCST's empty stubs)."""
    visits: Dict[str, List[Callable]] = {}
    leaves: Dict[str, List[Callable]] = {}
    for is_visit, name, attr in _callback_names(type(visitor)):
        (visits if is_visit else leaves).setdefault(name, []).append(getattr(visitor, attr))
    return visits, leaves


def merge(tables: Iterable[Dict[str, List[Callable]]]) -> Dict[str, List[Callable]]:
    out: Dict[str, List[Callable]] = {}
    for table in tables:
        for name, fns in table.items():
            out.setdefault(name, []).extend(fns)
    return out


# Worked out from LibCST's classes alone, so kept for the process: the classes a walk handling
# these type names skips, and per (skipped classes, node type) the fields it reads.
_SKIPS: Dict[frozenset, frozenset] = {}
_PLAN_FIELDS: Dict[Tuple[frozenset, type], Tuple[str, ...]] = {}


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
        handled = frozenset(visits) | frozenset(leaves)
        # Subtrees of tokens and layout are left alone unless a callback wants something in them.
        skip = _SKIPS.get(handled)
        if skip is None:
            skip = _SKIPS[handled] = frozenset(c for c, inside in inert_classes().items()
                                               if not any(k.__name__ in handled for k in inside))
        self.skip = skip
        self._plans: Dict[type, tuple] = {}

    def _plan(self, node: cst.CSTNode) -> tuple:
        t = type(node)
        name = t.__name__
        fields = _PLAN_FIELDS.get((self.skip, t))
        if fields is None:
            admits = field_classes(t)
            # fields that can only hold skipped subtrees (parentheses, whitespace) are not even read
            fields = tuple(f for f in child_fields(node) if not (admits.get(f) and admits[f] <= self.skip))
            _PLAN_FIELDS[(self.skip, t)] = fields
        plan = (tuple(self.visits.get(name, ())), tuple(self.leaves.get(name, ())), fields)
        self._plans[t] = plan
        return plan

    def _walker(self) -> Tuple[Callable[[cst.CSTNode], None], Callable[[], None]]:
        """The recursive walk, and a function that cuts its reference to itself once done: that
        cycle would keep the visitors, and through them the tree, for the cyclic collector."""
        plans = self._plans
        skip = self.skip
        prune = self.prune
        make_plan = self._plan

        def walk(node: cst.CSTNode) -> None:
            plan = plans.get(type(node)) or make_plan(node)
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

        def cut() -> None:
            nonlocal walk
            walk = None  # type: ignore[assignment]

        return walk, cut

    def walk(self, node: cst.CSTNode) -> None:
        walk, cut = self._walker()
        try:
            walk(node)
        finally:
            cut()

    def walk_module(self, module: cst.Module, after_statement: Callable[[cst.CSTNode], None]) -> None:
        """``walk(module)``, calling ``after_statement(stmt)`` once each top-level statement is done."""
        walk, cut = self._walker()
        try:
            plan = self._plans.get(cst.Module) or self._plan(module)
            enter = True
            for fn in plan[0]:
                if fn(module) is False and self.prune:
                    enter = False
            if enter:
                for name in plan[2]:  # header, body, footer: sequences
                    for child in getattr(module, name):
                        if type(child) not in self.skip:
                            walk(child)
                        if name == "body":
                            after_statement(child)
            for fn in plan[1]:
                fn(module)
        finally:
            cut()


def visit(node: cst.CSTNode, visitor: object) -> None:
    """``node.visit(visitor)`` for a read-only visitor with ``visit_<Type>``/``leave_<Type>`` methods."""
    visits, leaves = callbacks(visitor)
    Walker(visits, leaves, prune=True).walk(node)
