"""What a rule sees while the engine walks a file: values at this point, names, and where we are.

``FileContext`` is both the rules' API and the bookkeeping of pass two: it keeps a flow-sensitive
scope per function (assignments take effect after their statement), the loop stack (to know hot
training-step loops) and the store targets (``x[m] = v`` vs a read of ``x[m]``).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchsync_lint.inference.evaluate import Evaluator
from torchsync_lint.inference.scope import Scope
from torchsync_lint.inference.index import COLD_METHODS, FileIndex, FunctionInfo, names_function
from torchsync_lint.inference.branches import Branches, narrowed_by
from torchsync_lint.inference.collate import on_host
from torchsync_lint.inference.datasets import fetches_samples
from torchsync_lint.inference.frequency import EVERY_STEP, FrequencyTracker, caches_result, training_loops
from torchsync_lint.inference.values import MODULE, NUMBER, OBJECT, TENSOR, UNKNOWN, Value


# appended to the message of a finding on a value that is a tensor on some paths only
MAYBE_SUFFIX = " [maybe a tensor: a Python value on another path]"


class RawFinding:
    __slots__ = ("rule", "node", "message", "function", "hot", "cold", "fix", "frequency")

    def __init__(self, rule, node, message, function, hot, cold, fix=None, frequency=EVERY_STEP):
        self.rule = rule
        self.node = node
        self.message = message
        self.function = function
        self.hot = hot
        self.cold = cold
        self.fix = fix  # a torchsync_lint.adopt.fixes.Fix, or None
        self.frequency = frequency  # how often the line runs when its function runs (frequency.py)


class FileContext:
    def __init__(self, index: FileIndex, evaluator: Evaluator, cold_functions: Set[str] = frozenset()) -> None:
        self.index = index
        self.evaluator = evaluator
        self.aliases = index.aliases
        self.cold_functions = cold_functions
        self.findings: List[RawFinding] = []
        self._scopes: List[Scope] = [evaluator.module_scope()]
        self._scopes[0] = Scope(None, None, dict(self._scopes[0].values))  # fresh, flow-sensitive
        self._funcs: List[FunctionInfo] = []
        self._fetching: List[bool] = []  # per function: a dataset's sample-fetching method
        self._loops: List[cst.CSTNode] = []
        self._stores: Set[int] = set()
        self._hot_loop_depth = 0
        self.frequency = FrequencyTracker()
        self.branches = Branches()
        self._device_withs: List[cst.With] = []
        # Every rule asks about the same nodes: memoise answers by node (kept alive with them, so
        # an id is never reused). Values are dropped whenever a binding or the scope changes.
        self._values: Dict[int, Tuple[cst.CSTNode, Value]] = {}
        self._qualnames: Dict[int, Tuple[cst.CSTNode, Optional[str]]] = {}

    # -- the rules' API ----------------------------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self._scopes[-1]

    @property
    def function(self) -> Optional[FunctionInfo]:
        return self._funcs[-1] if self._funcs else None

    def value(self, expr: cst.BaseExpression) -> Value:
        hit = self._values.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        v = self._infer(expr)
        self._values[id(expr)] = (expr, v)
        return v

    def _infer(self, expr: cst.BaseExpression) -> Value:
        v = self.evaluator.infer(expr, self.scope)
        if self._fetching and self._fetching[-1]:
            v = on_host(v, unnamed_only=True)  # a dataset's __getitem__: what it holds and makes is on the host
        return v

    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.value(expr).kind == TENSOR

    def maybe_gpu_tensor(self, expr: cst.BaseExpression) -> bool:
        """A tensor not known to be on the CPU."""
        return self.value(expr).maybe_gpu

    def is_host_number(self, expr: cst.BaseExpression) -> bool:
        return self.value(expr).kind == NUMBER

    def is_unknown(self, expr: cst.BaseExpression) -> bool:
        return self.value(expr).kind == UNKNOWN

    def qualname(self, expr: cst.BaseExpression) -> Optional[str]:
        """``torch.nonzero`` for ``th.nonzero`` / ``nonzero`` imported from torch; None otherwise."""
        hit = self._qualnames.get(id(expr))
        if hit is not None and hit[0] is expr:
            return hit[1]
        q = self.aliases.qualify(expr)
        self._qualnames[id(expr)] = (expr, q)
        return q

    def tensor_method(self, call: cst.Call) -> Optional[str]:
        """The method name when ``call`` is ``<tensor>.name(...)``, else None."""
        f = call.func
        if type(f) is not cst.Attribute:
            return None
        q = self.qualname(f)
        # `consts.MEAN.to(d)` / `MEAN.to(d)` of another file's tensor: a method, though it qualifies
        if (q is None or q.split(".")[0] not in ("torch", "numpy")) and self.is_tensor(f.value):
            return f.attr.value
        return None

    def is_store(self, node: cst.CSTNode) -> bool:
        """True for the target of an assignment (``x[i] = v``, ``x[i] += v``)."""
        return id(node) in self._stores

    def open_loops(self) -> list:
        """The loops around the node being walked, outermost first."""
        return list(self._loops)

    @property
    def in_hot_loop(self) -> bool:
        return self._hot_loop_depth > 0

    def report(self, rule, node: cst.CSTNode, message: str, fix=None) -> None:
        func = self.function
        cold = func is None and not self.in_hot_loop
        if func is not None:
            cold = func.name in COLD_METHODS or names_function(func.key, func.name, self.cold_functions)
        if self._maybe_tensor(node):
            message += MAYBE_SUFFIX
        self.findings.append(RawFinding(rule, node, message, func.key if func else None, self.in_hot_loop, cold, fix,
                                        self.frequency.of(node)))

    def _maybe_tensor(self, node: cst.CSTNode) -> bool:
        """The reported expression (or the receiver or an argument of a reported call) is a
        tensor on some paths only: the finding is reported at a lower confidence."""
        stack, seen = [node], 0
        while stack and seen < 64:
            e = stack.pop()
            seen += 1
            if type(e) in (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.BooleanOperation):
                v = self.value(e)
                if v.kind == TENSOR and v.maybe:
                    return True
            if type(e) is cst.Call:
                if type(e.func) is cst.Attribute:
                    stack.append(e.func.value)
                stack.extend(a.value for a in e.args)
            elif type(e) is cst.Comparison:
                stack.append(e.left)
                stack.extend(c.comparator for c in e.comparisons)
            elif type(e) is cst.BinaryOperation:
                stack.extend((e.left, e.right))
            elif type(e) is cst.UnaryOperation:
                stack.append(e.expression)
            elif type(e) in (cst.Attribute, cst.Subscript):
                stack.append(e.value)
            elif type(e) is cst.FormattedStringExpression:
                stack.append(e.expression)  # `f"{meter.avg:.2f}"`
        return False

    # -- bookkeeping called by the engine's walker -------------------------------------------
    def enter_function(self, node: cst.FunctionDef) -> None:
        info = self.index.by_node.get(id(node))
        if info is None:
            return
        self._funcs.append(info)
        self._fetching.append(fetches_samples(info, self.index, self.evaluator.project))
        self.frequency.enter_frame(training_loops(node, info.hot_loops) if info.hot_loops else {},
                                   bool(node.decorators) and caches_result(node, self.aliases.qualify), node)
        self._scopes.append(Scope(info, self.scope, dict(self.evaluator.params(info))))
        self._values.clear()
        self._saved_loops = getattr(self, "_saved_loops", [])
        self._saved_loops.append((self._loops, self._hot_loop_depth))
        self._loops, self._hot_loop_depth = [], 0

    def leave_function(self, node: cst.FunctionDef) -> None:
        if self._funcs and self._funcs[-1].node is node:
            self._funcs.pop()
            self._fetching.pop()
            self.frequency.leave_frame()
            self._scopes.pop()
            self._values.clear()
            self._loops, self._hot_loop_depth = self._saved_loops.pop()

    # -- branches: names after an if/else or a loop hold the join of every path -----------------
    def enter_if(self, node: cst.If) -> None:
        self._values.clear()
        self.branches.enter_if(node, self.scope.values, self._narrow, self.aliases.qualify)

    def _narrow(self, test: cst.BaseExpression):
        # `isinstance(x, Tensor) and x.device != d`: the body sees both parts true
        out = narrowed_by(test, self.aliases.qualify, self.scope.lookup)
        func = self.function
        if func is not None:
            out = [(name, self._tensor_passed(func, name, v)) for name, v in out]
        return out + self._instances_narrowed(test, {name for name, _v in out})

    def _tensor_passed(self, func: FunctionInfo, name: str, v: Value) -> Value:
        """A parameter narrowed to a tensor: the tensors its callers pass say where it lives (where
        what it holds here is not known: callers pass tensors and lists, say)."""
        current = self.scope.lookup(name)
        if v.kind != TENSOR or v.device is not None or current is None or current.kind != UNKNOWN or current.ref:
            return v
        got = self.evaluator.tensors_passed(func, name)
        return got.with_(dtype=got.dtype or v.dtype) if got is not None else v

    def _instances_narrowed(self, test: cst.BaseExpression, done: set) -> list:
        """``isinstance(m, MoE)`` of a name inference cannot see: an instance of that class of the
        project, as an annotation ``m: MoE`` says (``for m in model.modules(): if isinstance(...)``)."""
        if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
            return self._instances_narrowed(test.left, done) + self._instances_narrowed(test.right, done)
        if not (type(test) is cst.Call and type(test.func) is cst.Name and test.func.value == "isinstance"
                and len(test.args) == 2 and type(test.args[0].value) is cst.Name
                and type(test.args[1].value) in (cst.Name, cst.Attribute)):
            return []
        name = test.args[0].value.value
        current = self.scope.lookup(name)
        if name in done or (current is not None and (current.kind != UNKNOWN or current.ref is not None)):
            return []
        v = self.evaluator.annotation_value(test.args[1].value)
        return [(name, v)] if v.kind in (MODULE, OBJECT) and v.cls is not None else []

    def leave_assert(self, node: cst.Assert) -> None:
        """``assert isinstance(x, torch.Tensor)``: the rest of the block sees a tensor, as in an if."""
        narrowed = self._narrow(node.test)
        if narrowed:
            self._values.clear()
            for name, v in narrowed:
                self.scope.values[name] = v

    def enter_orelse(self, node: cst.CSTNode) -> None:
        if self.branches.switch(node, self.scope.values):
            self._values.clear()

    def leave_if(self, node: cst.If) -> None:
        self._values.clear()
        self.branches.leave_if(node, self.scope.values)

    def enter_with(self, node: cst.With) -> None:
        """``with torch.device("cuda"):`` sets where factories without ``device=`` put tensors."""
        for item in node.items:
            call = item.item
            if type(call) is cst.Call and call.args and self.qualname(call.func) == "torch.device":
                d = self.evaluator.device_of(call.args[0].value, self.scope)
                self.evaluator.device_blocks.append(None if d == "?" else d)
                self._values.clear()
                self._device_withs.append(node)
                return

    def leave_with(self, node: cst.With) -> None:
        if self._device_withs and self._device_withs[-1] is node:
            self._device_withs.pop()
            self.evaluator.device_blocks.pop()
            self._values.clear()

    def enter_loop(self, node: cst.CSTNode) -> None:
        self.branches.enter_loop(node, self.scope.values)
        self.frequency.enter_loop(node)
        self._loops.append(node)
        if id(node) in self.index.hot_loops:
            self._hot_loop_depth += 1

    def leave_loop(self, node: cst.CSTNode) -> None:
        self.branches.leave_loop(node, self.scope.values)
        self.frequency.leave_loop(node)
        self._values.clear()
        if self._loops and self._loops[-1] is node:
            self._loops.pop()
            if id(node) in self.index.hot_loops:
                self._hot_loop_depth -= 1

    def mark_stores(self, targets) -> None:
        for t in targets:
            if type(t) in (cst.Subscript, cst.Attribute):
                self._stores.add(id(t))
            elif type(t) in (cst.Tuple, cst.List):
                self.mark_stores(el.value for el in t.elements)

    def bind(self, target: cst.BaseExpression, value: Value) -> None:
        self._values.clear()
        self.evaluator.bind(target, value, self.scope)

    def bind_for(self, node: cst.For) -> None:
        self._values.clear()
        self.evaluator.bind_for(node.target, node.iter, self.scope)

    def bind_comp(self, node: cst.CompFor) -> None:
        self._values.clear()
        self.evaluator.bind_for(node.target, node.iter, self.scope)
