"""Pass one over a file, the statements that bind names (a mixin of ``index.FileIndex``): each
function's ordered bindings (assignments, ``with ... as``, walrus, isinstance asserts), its
``return`` and ``yield`` values, the class body's values and fields, ``self.<attr> = ...`` in any
method, and what methods put into a container attribute (``self.seen.append(t)``,
``self.last["loss"] = t``) or a local dict (``out["loss"] = t``)."""

from __future__ import annotations

from typing import List

import libcst as cst

from torchsync_lint.inference.defs import CallSite, ClassInfo, string_key


def augmented_value(node: cst.AugAssign) -> cst.BinaryOperation:
    """``x += v`` binds ``x`` to ``x + v``: ``loss_sum = 0.0; loss_sum += loss`` holds a tensor."""
    op = getattr(cst, type(node.operator).__name__[: -len("Assign")])()
    return cst.BinaryOperation(left=node.target, operator=op, right=node.value)


class Bindings:
    """Mixin of ``index.FileIndex``."""

    def _bindings(self) -> List[tuple]:
        return self._func_stack[-1].bindings if self._func_stack else self.module_bindings

    # where each statement starts in its function's bindings: a call's arguments are the names as
    # they stand before the statement that makes it (``call_marks``), not after the function's end
    def mark_statement(self, node=None) -> None:
        self._stmt_mark = len(self._bindings())

    visit_SimpleStatementLine = visit_SimpleStatementSuite = visit_Try = mark_statement

    def visit_If(self, node: cst.If) -> None:
        self.mark_statement()
        if self._func_stack:
            self._func_stack[-1].has_if = True  # (calls in once / periodic branches: ``hotness._guarded``)
        # `if not isinstance(x, Image): continue` (or return, raise): past it, x is one (as after
        # `assert isinstance(x, Image)`)
        test = node.test
        if (type(test) is cst.UnaryOperation and type(test.operator) is cst.Not and type(test.expression) is cst.Call
                and type(test.expression.func) is cst.Name and test.expression.func.value == "isinstance"
                and node.orelse is None and _skips(node.body)):
            self._bindings().append(("assert", [], test.expression))

    def visit_Assign(self, node: cst.Assign) -> None:
        targets = [t.target for t in node.targets]
        self._bindings().append(("assign", targets, node.value))
        if self._scopes and isinstance(self._scopes[-1], ClassInfo):
            for t in targets:
                if type(t) is cst.Name:
                    self._scopes[-1].class_attrs[t.value] = node.value
        for t in targets:
            self._record_self_attr(t, node.value)
            if (type(t) is cst.Attribute and type(t.value) is cst.Name and t.value.value != "self"
                    and self._func_stack):
                self.record_store(t, node.value)
            elif type(t) is cst.Subscript and len(t.slice) == 1 and type(t.slice[0].slice) is cst.Index:
                self._record_keyed_store(t.value, t.slice[0].slice.value, node.value)

    def _record_keyed_store(self, container: cst.BaseExpression, key: cst.BaseExpression,
                            value: cst.BaseExpression) -> None:
        """``container[key] = value``: under a string key on a local name (a dict's), under a key held
        in a name (a dict's only where the name holds one), on ``self`` in a method (a dict
        subclass's own keys), on ``self.<attr>`` (what methods put into a container attribute)."""
        func = self._func_stack[-1] if self._func_stack else None
        if type(container) is cst.Name and func is not None:
            if container.value == "self" and func.cls is not None and func.is_method:
                func.cls.items.append((func, key, value))
            elif type(key) in (cst.SimpleString, cst.FormattedString):
                func.keyed.setdefault(container.value, []).append((string_key(key), value))
            elif type(key) in (cst.Name, cst.Attribute):
                func.filled.setdefault(container.value, []).append(value)
        held = self._self_attr_of(container)
        if held is not None:
            held[0].cls.attr_keyed.setdefault(held[1], []).append(
                (held[0], string_key(key) if type(key) is cst.SimpleString else None, value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bindings().append(("annassign", [node.target], node.value, node.annotation.annotation))
        if self._scopes and isinstance(self._scopes[-1], ClassInfo) and type(node.target) is cst.Name:
            if node.value is not None:
                self._scopes[-1].class_attrs[node.target.value] = node.value
            # a dataclass / NamedTuple field: `loss: Tensor`, `mask: Optional[Tensor] = None`
            self._scopes[-1].class_fields[node.target.value] = node.annotation.annotation
        if node.value is not None:
            self._record_self_attr(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        value = self.augmented[id(node)] = augmented_value(node)
        self._bindings().append(("assign", [node.target], value))
        self._record_self_attr(node.target, value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bindings().append(("assign", [node.target], node.value))

    def visit_Assert(self, node: cst.Assert) -> None:
        if type(node.test) in (cst.Call, cst.BooleanOperation):
            self._bindings().append(("assert", [], node.test))  # isinstance narrowing (evaluate.replay)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bindings().append(("with", node.asname.name, node.item))

    def visit_Return(self, node: cst.Return) -> None:
        if self._func_stack and node.value is not None:
            self._func_stack[-1].returns.append(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if self._func_stack:
            value = node.value
            self._func_stack[-1].yields.append(value if value is not None and type(value) is not cst.From else None)

    def record_store(self, target: cst.Attribute, value: cst.BaseExpression) -> None:
        """``image.data = t`` in a function: a call of the property's setter, if ``image`` is an
        instance of a class with one (``data.setter``, ``call_sites.CallSites._sites``)."""
        caller = self._func_stack[-1]
        call = cst.Call(func=target, args=[cst.Arg(value=value)])  # for inference only: no place in the source
        self.call_sites.setdefault("." + target.attr.value + ".setter", []).append(CallSite(caller, call, 0))
        loop = self._loop_starts[id(self._loop_stack[-1])] if self._loop_stack else None
        self.call_marks[id(call)] = (self._stmt_mark, loop)

    def _self_attr_of(self, e: cst.BaseExpression):
        """``self.<attr>`` in a method: (the method, the attribute's name); else None."""
        if (type(e) is cst.Attribute and type(e.value) is cst.Name and e.value.value == "self"
                and self._func_stack and self._func_stack[-1].is_method):
            return self._func_stack[-1], e.attr.value
        return None

    def _record_self_attr(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if type(target) in (cst.Tuple, cst.List):
            # `self.degrees, self.offset = helper(...)`: each attribute gets its element of the
            # value, as the expression `value[i]` (a tuple's element, as inference reads it)
            elements = target.elements
            if not any(type(el) is cst.StarredElement for el in elements):
                for i, el in enumerate(elements):
                    self._record_self_attr(el.value, _element_of(value, i))
            return
        if (
            type(target) is cst.Attribute
            and type(target.value) is cst.Name
            and target.value.value == "self"
            and self._func_stack
            and self._func_stack[-1].cls is not None
        ):
            func = self._func_stack[-1]
            func.cls.attrs.setdefault(target.attr.value, []).append((func, value))
            blocks = tuple(self._blocks)
            earlier = self._attr_blocks.setdefault((id(func), target.attr.value), [])
            for other_blocks, other in earlier:
                if other_blocks[: len(blocks)] == blocks:
                    func.cls.overwritten.add(id(other))
            earlier.append((blocks, value))


def _element_of(value: cst.BaseExpression, i: int) -> cst.BaseExpression:
    """The expression ``value[i]``, made for inference only (it has no place in the source)."""
    if type(value) in (cst.Tuple, cst.List) and len(value.elements) > i \
            and not any(type(el) is cst.StarredElement for el in value.elements):
        return value.elements[i].value
    return cst.Subscript(value=value, slice=[cst.SubscriptElement(slice=cst.Index(value=cst.Integer(str(i))))])


def _skips(block: cst.BaseSuite) -> bool:
    """The block is one ``continue``, ``return`` or ``raise``: what follows runs only when the
    test was false."""
    body = getattr(block, "body", ())
    if len(body) != 1:
        return False
    line = body[0]
    if type(line) in (cst.SimpleStatementLine, cst.SimpleStatementSuite) or type(block) is cst.SimpleStatementSuite:
        stmts = line.body if type(line) is cst.SimpleStatementLine else body
        return len(stmts) == 1 and type(stmts[0]) in (cst.Continue, cst.Return, cst.Raise)
    return False
