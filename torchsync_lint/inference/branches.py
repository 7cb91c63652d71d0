"""Branches join: what a name holds after an ``if``/``else`` or a loop is the join of what each
path left in it; ``if isinstance(v, Tensor):`` makes ``v`` a tensor inside the branch only.

Kept current by the rule walker (``FileContext``): ``enter_if`` before the test, ``switch`` when
the walk reaches the ``else``/``elif`` part, ``leave_if`` after; loops (``enter_loop``/
``leave_loop``) join the state before the loop with the state after its body, since the body
may run no time at all. A branch eager execution never takes (``if torch.jit.is_scripting():``,
``torch.jit.is_tracing()``, ONNX export) leaves nothing in the join.
"""

from __future__ import annotations

from typing import Dict, List, Optional

import libcst as cst

from torchsync_lint.inference.values import BATCH, SELF_ATTR, TENSOR, UNKNOWN, UNKNOWN_VALUE, Value, join, join_maybe, tensor

_TENSOR_TYPES = frozenset(("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"))


# False in eager execution (what training runs and the GPU truth record): a branch under them
# is TorchScript's or an exporter's, and its assignments never reach the code after the `if`
EAGER_FALSE = frozenset(("torch.jit.is_scripting", "torch.jit.is_tracing", "torch._C._get_tracing_state",
                         "torch.onnx.is_in_onnx_export"))


# names false whenever the code runs: `if TYPE_CHECKING:` holds imports for type checkers only
_RUNTIME_FALSE = frozenset(("typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING"))


def eager_false(test: cst.BaseExpression, qualify) -> bool:
    """``torch.jit.is_scripting()``, a falsy literal (``if 0:``, ``if False:``: code switched
    off by hand), ``TYPE_CHECKING``, and ``a or b`` / ``a and b`` that they decide."""
    t = type(test)
    if t is cst.Call:
        return qualify(test.func) in EAGER_FALSE
    if t is cst.Integer:
        return test.value == "0"
    if t is cst.Name:
        return test.value in ("False", "None") or qualify(test) in _RUNTIME_FALSE
    if t is cst.Attribute:
        return qualify(test) in _RUNTIME_FALSE
    if t is cst.BooleanOperation:
        left, right = eager_false(test.left, qualify), eager_false(test.right, qualify)
        return (left and right) if type(test.operator) is cst.Or else (left or right)
    return False


class _Frame:
    __slots__ = ("node", "before", "ends", "orelse_id", "otherwise", "dead")

    def __init__(self, node: cst.CSTNode, before: Dict[str, Value], orelse_id: Optional[int],
                 otherwise: Optional[Dict[str, Value]] = None) -> None:
        self.node = node
        self.before = before
        self.ends: List[Dict[str, Value]] = []
        self.orelse_id = orelse_id
        # the state where the test is false: `if not isinstance(v, Tensor): v = torch.tensor(v)`
        # leaves `v` a tensor (of unknown device) on the path that skips the body
        self.otherwise = otherwise if otherwise is not None else before
        self.dead: Optional[str] = None  # "body" / "else": the part eager execution never runs


def _join_states(states: List[Dict[str, Value]], before: Dict[str, Value], loop: bool = False) -> Dict[str, Value]:
    out: Dict[str, Value] = {}
    names = set()
    for s in states:
        names.update(s)
    for name in names:
        vals = [s.get(name, before.get(name)) for s in states]
        if name.startswith(SELF_ATTR) and None in vals:
            continue  # `self.x` set on one path only: the others read what the class holds
        known = [v for v in vals if v is not None]  # unbound on a path: that path cannot read it
        # a path where inference could not tell (no reference to resolve either) does not erase
        # a tensor another path made: `if mask is not None: edges = edges & mask` stays a tensor
        tensors = [v for v in known if v.kind == TENSOR]
        if tensors and all(v.kind == TENSOR or (v.kind == UNKNOWN and v.ref is None) for v in known):
            known = tensors
        v = known[0]
        for other in known[1:]:
            v = join_maybe(v, other) if loop else join(v, other)
        out[name] = v
    return out


class Branches:
    def __init__(self) -> None:
        self._frames: List[_Frame] = []

    def enter_if(self, node: cst.If, values: Dict[str, Value], narrow, qualify=None) -> None:
        orelse = node.orelse
        test = node.test
        otherwise = None
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            narrowed = narrow(test.expression)
            if narrowed:
                otherwise = dict(values)
                otherwise.update(narrowed)
        if otherwise is None:
            # `if isinstance(x, Tensor): ... else: torch.tensor(x)`: where the test is false, a
            # maybe-a-tensor `x` is the Python value it holds on its other paths
            for name, _v in narrow(test):
                held = values.get(name)
                if held is not None and held.kind == TENSOR and held.maybe:
                    otherwise = otherwise if otherwise is not None else dict(values)
                    otherwise[name] = UNKNOWN_VALUE
        frame = _Frame(node, dict(values), id(orelse) if orelse is not None else None, otherwise)
        if qualify is not None:
            if eager_false(test, qualify):
                frame.dead = "body"
            elif (type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
                  and eager_false(test.expression, qualify)):
                frame.dead = "else"
        self._frames.append(frame)
        for name, v in narrow(test):
            values[name] = v

    def switch(self, node: cst.CSTNode, values: Dict[str, Value]) -> bool:
        """At an ``else``/``elif``: keep the body's end, start again from the state before the if."""
        if not self._frames or self._frames[-1].orelse_id != id(node):
            return False
        frame = self._frames[-1]
        if frame.dead != "body" and not _leaves(frame.node.body):
            frame.ends.append(dict(values))  # (a body that raises or returns never reaches the join)
        values.clear()
        values.update(frame.otherwise)
        return True

    def leave_if(self, node: cst.If, values: Dict[str, Value]) -> None:
        if not self._frames or self._frames[-1].node is not node:
            return
        frame = self._frames.pop()
        last = node.orelse.body if type(node.orelse) is cst.Else else node.body if node.orelse is None else None
        ends = frame.ends + ([] if last is not None and _leaves(last) else [dict(values)])
        if frame.orelse_id is None:
            if frame.dead == "body":
                ends = [frame.otherwise]  # `if torch.jit.is_scripting(): ...` never runs eagerly
            elif frame.dead is None:
                ends.append(frame.otherwise)  # no else: the body may not run
        elif frame.dead == "else":
            ends = frame.ends  # the else part is the one that never runs
        if not ends:  # every path raises or returns: nothing after the if runs from here
            ends = [frame.otherwise]
        joined = _join_states(ends, frame.before)
        values.clear()
        values.update(joined)

    def enter_loop(self, node: cst.CSTNode, values: Dict[str, Value]) -> None:
        self._frames.append(_Frame(node, dict(values), None))

    def leave_loop(self, node: cst.CSTNode, values: Dict[str, Value]) -> None:
        if not self._frames or self._frames[-1].node is not node:
            return
        frame = self._frames.pop()
        joined = _join_states([dict(values), frame.before], frame.before, loop=True)
        values.clear()
        values.update(joined)


def isinstance_tensor(test: cst.BaseExpression, qualify, current) -> List[tuple]:
    """``isinstance(v, torch.Tensor)`` (or a tuple holding it), ``torch.is_tensor(v)`` ->
    [(name, tensor value)]."""
    if not (type(test) is cst.Call and test.args and type(test.args[0].value) is cst.Name):
        return []
    if len(test.args) == 1 and qualify(test.func) == "torch.is_tensor":
        names = [test.func]
    elif type(test.func) is cst.Name and test.func.value == "isinstance" and len(test.args) == 2:
        types = test.args[1].value
        names = [el.value for el in types.elements] if type(types) is cst.Tuple else [types]
        if not any(qualify(t) in _TENSOR_TYPES for t in names):
            return []
    else:
        return []
    name = test.args[0].value.value
    v = current(name)
    if v is not None and v.kind == TENSOR:
        return [(name, v.with_(assumed=False, maybe=False))]
    if v is not None and v.kind == BATCH:
        return [(name, v)]  # a host tensor from a DataLoader stays one
    return [(name, tensor())] if len(names) == 1 or v is None or v.kind == UNKNOWN else []


def narrowed_by(test: cst.BaseExpression, qualify, current) -> List[tuple]:
    """What a true ``test`` makes tensors: ``isinstance`` checks, joined by ``and``."""
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        return narrowed_by(test.left, qualify, current) + narrowed_by(test.right, qualify, current)
    return isinstance_tensor(test, qualify, current)


def _leaves(block: cst.BaseSuite) -> bool:
    """The block ends in ``raise`` or ``return``: its path does not reach the code after the if
    (``if not isinstance(x, Tensor): raise TypeError(...)`` leaves ``x`` a tensor after it)."""
    body = getattr(block, "body", ())
    if not body:
        return False
    last = body[-1]
    if type(last) is cst.SimpleStatementLine:
        return bool(last.body) and type(last.body[-1]) in (cst.Raise, cst.Return)
    if type(last) is cst.SimpleStatementSuite:
        return False
    return type(block) is cst.SimpleStatementSuite and type(last) in (cst.Raise, cst.Return)
