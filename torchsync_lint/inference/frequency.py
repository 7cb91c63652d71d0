"""How often a line runs when its function runs: every step, periodically, on an error path, once.

A sync in ``if step % 100 == 0: log(loss.item())`` costs one stall in a hundred steps; one in an
``except`` block or in a branch that ends in ``raise`` costs nothing until something fails; one
in ``if self._cache is None: self._cache = ...`` happens on the first call only. Findings carry
the class of the innermost such block (the branch's test itself still runs every step), and the
default report shows the every-step ones.

Classes, most specific wins: ``error-path`` (``except`` handlers, branches ending in ``raise``,
branches that warn (``warnings.warn``, ``logger.warning``/``error``, ``print("Warning: ...")``),
branches that print and repair the value their test found out of range (``if v.item() > 1:
print(...); v = one``),
``assert`` messages), ``once`` (first-call caching: ``if X is None:`` that assigns X,
``if not hasattr(obj, "a"):``, ``if k not in cache:`` that stores an item of
``cache`` (any key, any container: ``if "steps" not in self.acc[kind]:``); first-iteration
flags: ``if first:`` whose branch or enclosing loop sets ``first = False``, ``if not done:`` that
sets it True, ``if i == 0:`` / ``if i < 3:`` on a training loop's counter; the body of a
``functools.cache``/``lru_cache``/``cached_property`` function, which runs once per argument set),
``periodic`` (a branch whose test takes a remainder: ``step % N == 0``; a step hook's branch on
its first batches, ``if batch_idx < 10:``, taken in every epoch).

In a function that contains a training loop (a loop that calls ``.backward()`` or ``.step()``),
the code before and after that loop, outside every loop, runs once per call, and so does a loop
that comes before the first training loop (over references to encode, parameters to set, a
schedule to build: nothing has stepped yet); a loop after it keeps its own label (an evaluation
pass over data runs once per batch). Set-up code is ``set-up`` (``SETUP``), which the
engine turns into ``once`` unless the function itself runs every step (a step hook, or hot through
the call graph). What such set-up code calls, when nothing else calls it, runs once too
(``hotness.CallGraph.runs_once``). Set-up code (``__init__``, module level) and test files are
classed by the engine, from the function and the path.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from torchsync_lint.inference.index import STEP_HOOKS
# the classes themselves live in ``labels`` (read without a syntax tree); re-exported here
from torchsync_lint.inference.labels import (  # noqa: F401
    CLASSES,
    ERROR_PATH,
    EVERY_STEP,
    NOT_HOT,
    ONCE,
    PERIODIC,
    SETUP,
    TEST,
    combine,
    settle,
)
from torchsync_lint.inference.names import dotted
from torchsync_lint.syntax.walk import iter_children

# Decorators that memoise a function: its body runs once per argument set (per instance).
CACHING_DECORATORS = frozenset(("functools.cache", "functools.lru_cache", "functools.cached_property"))


def _takes_remainder(test: cst.BaseExpression) -> bool:
    stack: List[cst.CSTNode] = [test]
    while stack:
        n = stack.pop()
        if type(n) is cst.BinaryOperation and type(n.operator) is cst.Modulo:
            if type(n.left) not in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
                return True
        if type(n) in (cst.Lambda, cst.Call):
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
        if type(n) is cst.Assign:
            targets = [t.target for t in n.targets]
        elif type(n) in (cst.AnnAssign, cst.AugAssign):
            targets = [n.target]
        for t in targets:
            if type(t) is cst.Subscript:
                out.add(("item", dotted(t.value)))
            else:
                out.add(("name", dotted(t)))
        if type(n) not in (cst.FunctionDef, cst.ClassDef):
            stack.extend(iter_children(n))
    return out


_CODE = cst.Module(body=[])


def _stored_in(body: cst.BaseSuite) -> set:
    """The source text of every container a block stores an item in (``cache`` of ``cache[k] =
    v``, ``self.acc[kind]`` of ``self.acc[kind]["steps"] = v``), outside nested functions."""
    out = set()
    stack: List[cst.CSTNode] = [body]
    while stack:
        n = stack.pop()
        targets = ([t.target for t in n.targets] if type(n) is cst.Assign
                   else [n.target] if type(n) is cst.AnnAssign else [])
        out.update(_CODE.code_for_node(t.value) for t in targets if type(t) is cst.Subscript)
        if type(n) not in (cst.FunctionDef, cst.ClassDef):
            stack.extend(iter_children(n))
    return out


def _first_call_cache(test: cst.BaseExpression, body: cst.BaseSuite, in_training: bool = False) -> bool:
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = test.expression
        if type(inner) is cst.Call and dotted(inner.func) == "hasattr":
            return True
        return False
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        comp = test.comparisons[0]
        if type(comp.operator) is cst.NotIn:
            # `if k not in cache:` / `if "steps" not in self.acc[kind]:` storing an item there
            if dotted(comp.comparator) is not None:
                return ("item", dotted(comp.comparator)) in _assigned(body)
            return _CODE.code_for_node(comp.comparator) in _stored_in(body)
        left = dotted(test.left)
        if left is None:
            return False
        is_none = type(comp.comparator) is cst.Name and comp.comparator.value == "None"
        if type(comp.operator) is cst.Is and is_none:
            # an attribute keeps its value between calls, a local between a training loop's steps;
            # elsewhere a local (`if emb is None: emb = f(x)`, a default) is missing on every call
            return ("." in left or in_training) and ("name", left) in _assigned(body)
    return False


def _flag_test(test: cst.BaseExpression) -> Optional[Tuple[str, bool]]:
    """``if flag:`` -> (flag, True); ``if not flag:`` -> (flag, False): the name and the value it
    holds while the branch runs."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        name = dotted(test.expression)
        return (name, False) if name is not None else None
    name = dotted(test)
    return (name, True) if name is not None else None


def _sets_constant(body: cst.CSTNode, name: str, value: bool) -> bool:
    """Does the block assign ``name = False`` (``value`` False) / ``name = True`` anywhere outside
    nested functions and classes?"""
    want = "True" if value else "False"
    stack: List[cst.CSTNode] = [body]
    while stack:
        n = stack.pop()
        if type(n) is cst.Assign and type(n.value) is cst.Name and n.value.value == want:
            if any(dotted(t.target) == name for t in n.targets):
                return True
        if type(n) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            stack.extend(iter_children(n))
    return False


def _counter(loop: cst.CSTNode) -> Optional[str]:
    """The counter a ``for`` loop numbers its iterations with: ``i`` of ``for i, x in
    enumerate(xs)`` (no ``start=``) or of ``for i in range(n)``."""
    if type(loop) is not cst.For or type(loop.iter) is not cst.Call:
        return None
    fn = dotted(loop.iter.func)
    args = loop.iter.args
    if fn == "enumerate" and len(args) == 1 and type(loop.target) is cst.Tuple and loop.target.elements:
        first = loop.target.elements[0].value
        return first.value if type(first) is cst.Name else None
    if fn == "range" and len(args) == 1 and type(loop.target) is cst.Name:
        return loop.target.value
    return None


def _early_counters(test: cst.BaseExpression) -> List[str]:
    """Names the test requires to be small: ``i == 0``, ``i < 10``, ``i <= 2`` (an int literal
    bound), alone or as one part of an ``and``."""
    out: List[str] = []
    parts: List[cst.BaseExpression] = [test]
    while parts:
        t = parts.pop()
        if type(t) is cst.BooleanOperation and type(t.operator) is cst.And:
            parts.extend((t.left, t.right))
        elif (type(t) is cst.Comparison and len(t.comparisons) == 1 and type(t.left) is cst.Name
              and type(t.comparisons[0].comparator) is cst.Integer):
            op, bound = t.comparisons[0].operator, t.comparisons[0].comparator.value
            if type(op) in (cst.LessThan, cst.LessThanEqual) or (type(op) is cst.Equal and bound == "0"):
                out.append(t.left.value)
    return out


def batch_index_param(node: cst.FunctionDef) -> Optional[str]:
    """The batch-index parameter of a step hook (``training_step(self, batch, batch_idx)``, or a
    private variant the hooks share, ``_shared_step(self, batch, batch_idx, stage)``): the
    framework counts it from 0 in every epoch."""
    if node.name.value.lstrip("_") not in STEP_HOOKS:
        return None
    names = [p.name.value for p in node.params.params]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return names[1] if len(names) >= 2 else None


def _first_iteration(test: cst.BaseExpression, body: cst.BaseSuite, loops: List[cst.CSTNode], training) -> bool:
    """A branch that runs on the first pass only: ``if not self._started:`` that sets it True (an
    attribute keeps its value between calls); in a training loop (ids in ``training``), ``if
    first:`` that the branch or the loop turns off (``first = False``), ``if i == 0:`` / ``if i <
    3:`` on the loop's counter (the first iterations). A local flag in any other loop is reset
    with every call of its function."""
    loop = loops[-1] if loops else None
    in_training = loop is not None and id(loop) in training
    if type(test) in (cst.Comparison, cst.BooleanOperation):
        return in_training and _counter(loop) in _early_counters(test)
    flag = _flag_test(test)
    if flag is None:
        return False
    name, holds = flag
    if loop is not None and _sets_constant(loop, name, holds):
        return False  # re-armed every iteration (``found = False`` ... ``found = True``): not a flag
    if "." in name and _sets_constant(body, name, not holds):
        return True
    return in_training and (_sets_constant(body, name, not holds) or _sets_constant(loop, name, not holds))


# Calls that mark a loop as a training step (index.STEP_CALL_ATTRS), and those a loop over
# optimizers or losses makes on its own (``for opt in opts: opt.step()``: no training loop).
_STEP_CALLS = frozenset(("backward", "step"))
_BOOKKEEPING_CALLS = frozenset(("backward", "step", "zero_grad", "update"))


def _bookkeeping_only(loop: cst.CSTNode) -> bool:
    body = getattr(loop, "body", None)
    stmts = body.body if type(body) in (cst.IndentedBlock, cst.SimpleStatementSuite) else ()
    for st in stmts:
        small = st.body if type(st) is cst.SimpleStatementLine else [st]
        if type(st) is cst.SimpleStatementSuite:
            small = st.body
        for sm in small:
            call = sm.value if type(sm) is cst.Expr else None
            if not (type(call) is cst.Call and type(call.func) is cst.Attribute
                    and call.func.attr.value in _BOOKKEEPING_CALLS):
                return False
    return True


def _loops_in(node: cst.CSTNode) -> List[cst.CSTNode]:
    """Loops directly in ``node`` (not in nested functions), outermost first."""
    out: List[cst.CSTNode] = []
    stack: List[cst.CSTNode] = [node]
    while stack:
        n = stack.pop()
        if n is not node and type(n) in (cst.For, cst.While):
            out.append(n)
        if type(n) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda) or n is node:
            stack.extend(iter_children(n))
    return out


def _calls_step(node: cst.CSTNode, skip: set) -> bool:
    stack: List[cst.CSTNode] = [node]
    while stack:
        n = stack.pop()
        if id(n) in skip:
            continue
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in _STEP_CALLS:
            return True
        if type(n) not in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            stack.extend(iter_children(n))
    return False


def training_loops(func: cst.FunctionDef, hot_loops) -> Dict[int, bool]:
    """id(loop) -> True for a step loop (its own body calls ``.backward()``/``.step()``), False
    for an epoch loop (it holds a step loop and takes no step itself), over the function's
    training loops: ``hot_loops`` (the index's loops that call ``.backward()``/``.step()``) but
    those that only step optimizers or losses."""
    loops = [n for n in _loops_in(func) if id(n) in hot_loops and not _bookkeeping_only(n)]
    ids = {id(n) for n in loops}
    out: Dict[int, bool] = {}
    for loop in loops:
        inner = {id(n) for n in _loops_in(loop) if id(n) in ids}
        out[id(loop)] = not inner or _calls_step(loop.body, inner)
    return out


def caches_result(node: cst.FunctionDef, qualify) -> bool:
    """``@functools.cache``, ``@lru_cache(maxsize=...)``, ``@cached_property`` however imported."""
    for d in node.decorators:
        expr = d.decorator.func if type(d.decorator) is cst.Call else d.decorator
        q = qualify(expr)
        if q in CACHING_DECORATORS:
            return True
    return False


# Calls that report a problem: a branch that makes one runs when something is off (an error path).
_WARNING_CALLS = frozenset(("warn", "warning", "error", "critical", "exception"))


def _leading_text(expr: cst.BaseExpression) -> str:
    """The literal text a string expression starts with (``"Warning: " f"{x}"`` -> ``Warning: ``)."""
    while type(expr) is cst.ConcatenatedString:
        expr = expr.left
    if type(expr) is cst.SimpleString:
        return expr.evaluated_value if isinstance(expr.evaluated_value, str) else ""
    if type(expr) is cst.FormattedString and expr.parts and type(expr.parts[0]) is cst.FormattedStringText:
        return expr.parts[0].value
    return ""


def _prints_warning(call: cst.Call) -> bool:
    """``print("Warning: did not converge ...")``: a message that says it is a warning or error."""
    return (type(call.func) is cst.Name and call.func.value == "print" and bool(call.args)
            and _leading_text(call.args[0].value).lstrip(" *[!#-").lower().startswith(("warn", "error")))


def _warns(body: cst.BaseSuite) -> bool:
    """One of the block's own statements is ``warnings.warn(...)`` / ``logger.warning(...)``...,
    or prints a warning (``print("Warning: ...")``)."""
    stmts = body.body if type(body) in (cst.IndentedBlock, cst.SimpleStatementSuite) else ()
    for st in stmts:
        small = st.body if type(st) is cst.SimpleStatementLine else [st] if isinstance(st, cst.BaseSmallStatement) else []
        for sm in small:
            call = sm.value if type(sm) is cst.Expr else None
            if type(call) is not cst.Call:
                continue
            if (type(call.func) is cst.Attribute and call.func.attr.value in _WARNING_CALLS
                    and type(call.func.value) in (cst.Name, cst.Attribute)) or _prints_warning(call):
                return True
    return False


def names_read(test: cst.BaseExpression) -> set:
    """Dotted names a branch test reads (``ssim.item() > 1.0`` reads ``ssim``)."""
    out, stack = set(), [test]
    while stack:
        n = stack.pop()
        name = dotted(n) if type(n) in (cst.Name, cst.Attribute) else None
        if name is not None:
            parts = name.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))  # `v.item` reads `v`
            continue
        if type(n) is not cst.Lambda:
            stack.extend(iter_children(n))
    return out


_ORDER = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual)


def _bounds_check(test: cst.BaseExpression) -> bool:
    """The test compares a value with a bound (``<``, ``>``, ``<=``, ``>=``)."""
    stack = [test]
    while stack:
        n = stack.pop()
        if type(n) is cst.Comparison and any(isinstance(c.operator, _ORDER) for c in n.comparisons):
            return True
        if type(n) in (cst.BooleanOperation, cst.UnaryOperation):
            stack.extend(iter_children(n))
    return False


def _reports_and_repairs(test: cst.BaseExpression, body: cst.BaseSuite) -> bool:
    """``if loss.item() > 1.0: print("out of range, clamping"); loss = one``: the test checks a
    bound, one of the block's own statements prints, and the block assigns a name the test reads:
    a branch that reports and repairs a bad value, taken only when something is off."""
    stmts = body.body if type(body) in (cst.IndentedBlock, cst.SimpleStatementSuite) else ()
    smalls = [sm for st in stmts for sm in (st.body if type(st) is cst.SimpleStatementLine else
                                            [st] if isinstance(st, cst.BaseSmallStatement) else [])]
    prints = any(type(sm) is cst.Expr and type(sm.value) is cst.Call and type(sm.value.func) is cst.Name
                 and sm.value.func.value == "print" for sm in smalls)
    if not prints or not _bounds_check(test):
        return False
    read = names_read(test)
    for sm in smalls:
        targets = [t.target for t in sm.targets] if type(sm) is cst.Assign else [sm.target] if type(sm) in (cst.AnnAssign, cst.AugAssign) else []
        if any(dotted(t) in read for t in targets):
            return True
    return False


def _ends_in_raise(body: cst.BaseSuite) -> bool:
    stmts = body.body if type(body) in (cst.IndentedBlock, cst.SimpleStatementSuite) else ()
    if not stmts:
        return False
    last = stmts[-1]
    if type(last) is cst.SimpleStatementLine:
        return any(type(s) is cst.Raise for s in last.body)
    return type(last) is cst.Raise


class FrequencyTracker:
    """Kept current by the rule walker: ``enter``/``leave`` for every ``If``, ``ExceptHandler``,
    ``Assert`` and block; ``of(node)`` for the class of a reported node."""

    def __init__(self) -> None:
        self._blocks: Dict[int, str] = {}  # id(block) -> class, registered by its If
        self._stack: List[str] = []
        self._assert_msgs: set = set()
        # per function being walked: [class outside its training loops, its training_loops,
        # step loops open, epoch loops open, a training loop left already, the batch-index
        # parameter of a step hook]; and the loops open in it (first-iteration flags)
        self._frames: List[list] = []
        self._loops: List[List[cst.CSTNode]] = [[]]

    def enter_if(self, node: cst.If) -> None:
        cls = None
        loops, training = self._loops[-1], self._frames[-1][1] if self._frames else {}
        if _ends_in_raise(node.body) or _warns(node.body) or _reports_and_repairs(node.test, node.body):
            cls = ERROR_PATH
        elif _first_call_cache(node.test, node.body, bool(loops) and id(loops[-1]) in training) or _first_iteration(
                node.test, node.body, loops, training):
            cls = ONCE
        elif _takes_remainder(node.test):
            cls = PERIODIC
        elif self._frames and self._frames[-1][5] is not None and self._frames[-1][5] in _early_counters(node.test):
            cls = PERIODIC  # a step hook's first batches (`if batch_idx < 10:`): in every epoch
        if cls is not None:
            self._blocks[id(node.body)] = cls
        orelse = node.orelse
        if type(orelse) is cst.Else and _ends_in_raise(orelse.body):
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

    def branch(self) -> str:
        """The class of the innermost block open now (its branches only, not the function's
        training loops)."""
        return self._stack[-1] if self._stack else EVERY_STEP

    def of(self, node: cst.CSTNode) -> str:
        if id(node) in self._assert_msgs:
            return ERROR_PATH
        cls = self._stack[-1] if self._stack else EVERY_STEP
        if self._frames:
            outside, _loops, steps, epochs, trained, _index = self._frames[-1]
            # in another loop of such a function: set-up before the first training loop; after it
            # (an evaluation pass), as often as that loop runs
            floor = None if steps else PERIODIC if epochs else None if self._loops[-1] and trained else outside
            if floor is not None:
                cls = combine(floor, cls)
        return cls

    def enter_function(self) -> None:
        self._stack.append(EVERY_STEP)  # a nested def runs when called, not when defined

    def leave_function(self) -> None:
        if self._stack:
            self._stack.pop()

    def enter_frame(self, loops: Dict[int, bool], cached: bool, node: Optional[cst.FunctionDef] = None) -> None:
        """Called with each function entered (``FileContext``), with its ``training_loops``: one
        whose body holds a training loop runs its other code once per call (``SETUP``), and an
        epoch loop's own code periodically; a cached function runs once throughout; a step hook's
        branch on its first batches runs periodically."""
        index = batch_index_param(node) if node is not None else None
        if cached:
            self._frames.append([ONCE, {}, 0, 0, False, index])
        else:
            self._frames.append([SETUP if loops else None, loops, 0, 0, False, index])
        self._loops.append([])

    def leave_frame(self) -> None:
        if self._frames:
            self._frames.pop()
            self._loops.pop()

    def _count(self, node: cst.CSTNode, by: int) -> None:
        if self._frames:
            frame = self._frames[-1]
            step = frame[1].get(id(node))
            if step is not None:
                frame[2 if step else 3] += by
                if by < 0:
                    frame[4] = True  # a training loop has run: later loops are not set-up

    def enter_loop(self, node: cst.CSTNode) -> None:
        self._loops[-1].append(node)
        self._count(node, 1)

    def leave_loop(self, node: cst.CSTNode) -> None:
        if self._loops[-1] and self._loops[-1][-1] is node:
            self._loops[-1].pop()
        self._count(node, -1)
