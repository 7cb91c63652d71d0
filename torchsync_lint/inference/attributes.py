"""What ``self.<attr>`` holds for the methods that read it: the join of every assignment in
any method (one that updates the attribute, ``self.total += n``, evaluated again from the others,
or from what a base class stores), what the class body or a property gives, what a base class in
this file or another stores, and what methods put into a container attribute (``self.seen.append(t)``,
``self.last["loss"] = t``).

A mixin of ``evaluate.Evaluator`` (through ``summaries.Summaries``): it uses the evaluator's
``infer``, summary scopes, memo tables and recursion guard.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchsync_lint.inference.defs import ClassInfo, FunctionInfo, is_property, item_key
from torchsync_lint.syntax.walk import iter_children
from torchsync_lint.inference.values import (
    ITEMS,
    CPU,
    DICT,
    LIST,
    MAX_KEYS,
    NONE,
    TENSOR,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    join,
    join_maybe,
    join_members,
    tensor,
)


class Attributes:
    """Mixin of ``evaluate.Evaluator``."""

    def self_attr(self, cls: Optional[ClassInfo], name: str) -> Value:
        if cls is None:
            return UNKNOWN_VALUE
        key = (id(cls), name)
        got = self._attrs.get(key)
        if got is not None:
            return got
        busy = ("attr",) + key
        if busy in self._busy:
            self._cuts.append(busy)
            return UNKNOWN_VALUE
        mark = len(self._cuts)
        self._busy.add(busy)
        try:
            if name == ITEMS:
                out = self._items(cls)
            elif name in cls.buffers:
                out = tensor()
            elif name in cls.attrs:
                out = self._attr_join(cls, key, cls.attrs[name])
                if name in cls.class_attrs:  # read before any method assigns it
                    out = join(out, self.infer(cls.class_attrs[name], self.module_scope()))
            elif name in cls.methods:  # a property reads as what it returns; a method is no value here
                m = cls.methods[name]
                out = self.returns(m) if is_property(m, self.aliases.qualify) else UNKNOWN_VALUE
            elif name in cls.class_attrs:
                # `weights = torch.linspace(0, 1, 5)` in the class body: made once, on the host
                out = self.infer(cls.class_attrs[name], self.module_scope())
                if out.kind == NONE and name in cls.class_fields:
                    # `mask: Optional[Tensor] = None`: a dataclass field's default; instances hold the annotation
                    declared = self.annotation_value(cls.class_fields[name])
                    out = declared if declared.kind != UNKNOWN else out
            elif name in cls.class_fields:
                out = self.annotation_value(cls.class_fields[name])  # a dataclass field `loss: Tensor`
            else:
                out = self._inherited_attr(cls, name)
            out = self._attr_filled(cls, name, out)
            # tentative when a summary it depends on was cut short (a cycle through the callers)
            self._memo(self._attrs, key, out, self._complete(busy, mark))
            return out
        finally:
            self._busy.discard(busy)
            self._forget_cuts()

    def _inherited_attr(self, cls: ClassInfo, name: str) -> Value:
        """``self.<name>`` as the bases of ``cls`` (in this file, then in others) set it."""
        out = UNKNOWN_VALUE
        for base in cls.bases:
            base_cls = self.index.classes.get(base.split(".")[-1])
            if base_cls is not None and base_cls is not cls:
                out = self.self_attr(base_cls, name)
                if out.kind != UNKNOWN:
                    return out
        if out.ref is None:
            for base in self._foreign_bases(cls):
                out = self._ref(("attr", base, name))
                if out.kind != UNKNOWN:
                    break
        return out

    def _attr_join(self, cls: ClassInfo, key: tuple, assignments) -> Value:
        """The join of every ``self.x = ...``. One that reads ``self.x`` itself (``self.x =
        self.x.to("cpu")``) is evaluated again with the join of the others, so that a transformed
        attribute keeps its kind instead of turning the whole attribute unknown."""
        busy = ("attr",) + key
        plain, derived = [], []
        cut_in = set()  # methods whose replay read the attribute while it was being computed
        for f, _expr in assignments:
            mark = len(self._cuts)
            self.summary_scope(f)
            if busy in self._cuts[mark:]:
                cut_in.add(id(f))
        for f, expr in assignments:
            mark = len(self._cuts)
            v = self.infer(expr, self.summary_scope(f))
            (derived if busy in self._cuts[mark:] or id(f) in cut_in else plain).append((f, expr, v))
        overwritten = cls.overwritten
        # updates of the attribute: what replaying read it while it was computed, or what names it
        # (`self.total = self.total + t`: a replay memoised earlier need not read it again)
        updates = {id(expr) for _f, expr, _v in derived}
        reads = self.index.self_attr_reads  # per file: the same updates are asked by every evaluator
        for _f, expr, _v in plain:
            got = reads.get((id(expr), key[1]))
            if got is None:
                got = reads[(id(expr), key[1])] = _reads_self_attr(expr, key[1])
            if got:
                updates.add(id(expr))

        def joined(rows, live_only: bool) -> Optional[Value]:
            # within a method, the branches' values join (a number on one path and a tensor on the
            # other: unknown), except that an update of the attribute (`self.n += (p == y).sum()`)
            # that turns a number it started as into a tensor is maybe a tensor, like a loop's
            # accumulator; so is a tensor one method stores where another stored a number
            # (`self.avg = 0` in `reset`, `self.avg = self.sum / self.count` in `update`)
            per_method: dict = {}
            for f, expr, v in rows:
                if not (live_only and id(expr) in overwritten):
                    got = per_method.get(id(f))
                    per_method[id(f)] = v if got is None else (join_maybe if id(expr) in updates else join)(got, v)
            out = None
            for v in per_method.values():
                out = v if out is None else join_maybe(out, v)
            return out

        base = joined(plain, False)
        inherited = None
        if derived and base is None:
            # only updates here (`self.total += n`): they start from what a base class stores
            inherited = self._inherited_attr(cls, key[1])
            base = inherited if inherited.kind != UNKNOWN and inherited.ref is None else None
        if derived and base is not None and base.kind != UNKNOWN:
            self._attrs[key] = base  # one round of the fixpoint: the derived ones read this
            try:
                for f in {id(f): f for f, _e, _v in derived}.values():
                    self._summary.pop(id(f), None)  # replayed while the attribute was unknown
                derived = [(f, expr, self.infer(expr, self.summary_scope(f))) for f, expr, _v in derived]
            finally:
                self._attrs.pop(key, None)
        out = joined(plain + derived, True)
        if out is None:  # every assignment overwritten (cannot be): keep them all
            out = joined(plain + derived, False)
        if out is not None and base is not None and base is inherited:
            out = join(base, out)
        # not when a method moves it in place (`self.x = self.x.to(d)`): there after its first call
        if not derived and out is not None and out.kind == TENSOR and out.device is None and any(
                f.name == "__init__" and v.kind == TENSOR and v.device == CPU and id(expr) not in overwritten
                for f, expr, v in plain):
            out = out.with_(cpu_at_init=True)  # until the method that moves it has run
        return out if out is not None else UNKNOWN_VALUE

    def method(self, cls: Optional[ClassInfo], name: str) -> Optional[FunctionInfo]:
        seen = set()
        while cls is not None and id(cls) not in seen:
            seen.add(id(cls))
            if name in cls.methods:
                return cls.methods[name]
            nxt = None
            for base in cls.bases:
                nxt = self.index.classes.get(base.split(".")[-1])
                if nxt is not None:
                    break
            cls = nxt
        return None

    def _attr_filled(self, cls, name: str, v: Value) -> Value:
        """``self.seen = []`` (or ``{}``) in one method, ``self.seen.append(t)`` or
        ``self.seen["loss"] = t`` in others: the container holds what every method puts in."""
        appends, stores = cls.attr_appends.get(name), cls.attr_keyed.get(name)
        if appends and v.kind == LIST and v.item is None and not v.elts:
            item = self._filled_join(("attr_appended", id(cls), name), appends)
            return v.with_(item=item) if item is not None else v
        if stores and (v.kind == DICT and v.item is None and not v.keys or v.kind == UNKNOWN and v.ref is None):
            item = self._filled_join(("attr_keyed", id(cls), name), [(f, e) for f, _k, e in stores])
            if item is None:
                return v
            keys = {k for _f, k, _e in stores}
            if None in keys or len(keys) > MAX_KEYS:
                return Value(DICT, item=item)
            named = tuple((k, self._filled_join(("attr_keyed", id(cls), name, k),
                                                [(f, e) for f, kk, e in stores if kk == k]) or UNKNOWN_VALUE)
                          for k in sorted(keys))
            return Value(DICT, item=item, keys=named)
        return v

    def _items(self, cls: ClassInfo) -> Value:
        """What ``self[key] = value`` in the methods of ``cls`` keeps: a dict of the values under
        each key named (a computed key makes one value for all); else what a base class keeps."""
        if not cls.items:
            return self._inherited_attr(cls, ITEMS)
        rows = [(f, item_key(k, f), e) for f, k, e in cls.items]
        keys = {k for _f, k, _e in rows}
        if None in keys or len(keys) > MAX_KEYS:
            item = self._filled_join(("items", id(cls)), [(f, e) for f, _k, e in rows])
            return Value(DICT, item=item) if item is not None else UNKNOWN_VALUE
        named = tuple((k, self._filled_join(("items", id(cls), k), [(f, e) for f, kk, e in rows if kk == k])
                       or UNKNOWN_VALUE) for k in sorted(keys))
        if all(v.kind == UNKNOWN for _k, v in named):
            return UNKNOWN_VALUE
        return Value(DICT, keys=named)

    def _filled_join(self, key: tuple, rows):
        """The join of what methods store into a container attribute (each value in its own
        method's scope), or None when nothing is known."""
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            item = None
            for f, e in rows:
                got = self.infer(e, self.summary_scope(f))
                item = got if item is None else join_members(item, got)
        finally:
            self._busy.discard(key)
        return None if item is None or item.kind == UNKNOWN else item


def _reads_self_attr(e: cst.BaseExpression, name: str) -> bool:
    """``self.<name>`` appears in ``e`` (at most a few levels down: updates are short)."""
    stack, seen = [e], 0
    while stack and seen < 64:
        n = stack.pop()
        seen += 1
        if (type(n) is cst.Attribute and n.attr.value == name and type(n.value) is cst.Name
                and n.value.value == "self"):
            return True
        # LibCST's ``children`` rebuilds the node through its visitor to list them (a tenth of a
        # whole run's time, asked for every update of an attribute): the same nodes, read directly
        stack.extend(iter_children(n))
    return False
