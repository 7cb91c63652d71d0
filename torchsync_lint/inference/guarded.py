"""Calls a function makes only in a branch that runs once or periodically when the function runs.

``if batch_idx < 10: datamodule.plot(sample)`` in a step hook, ``if step % 100 == 0:
self.report(x)``, ``if self._table is None: self._table = self.build()``: the callee runs at the
branch's frequency, not at the function's. The branches are classed as ``frequency`` classes the
lines of a function (``FrequencyTracker.enter_if``: remainders, first batches of a step hook,
first-call caches, first-iteration flags); the call graph (``callgraph``) takes such a call as an
edge of that kind, from a caller that runs every step too.
"""

from __future__ import annotations

from typing import Dict, List

import libcst as cst

from torchsync_lint.inference.frequency import FrequencyTracker
from torchsync_lint.inference.labels import ONCE, PERIODIC
from torchsync_lint.syntax.walk import iter_children

_GUARDS = (ONCE, PERIODIC)
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite)
_LOOPS = (cst.For, cst.While)
_HANDLERS = (cst.ExceptHandler, cst.ExceptStarHandler)
# type -> a statement, a suite or a clause the walk enters (an isinstance test of LibCST's abstract
# bases is slow: memoised by concrete type)
_ENTERED: Dict[type, bool] = {}


def _entered(t: type) -> bool:
    got = _ENTERED.get(t)
    if got is None:
        got = _ENTERED[t] = (issubclass(t, (cst.BaseStatement, cst.BaseSuite, cst.BaseSmallStatement))
                             or t in _HANDLERS or t in (cst.Else, cst.Finally))
    return got


def _calls_in(node: cst.CSTNode, cls: str, out: Dict[int, str]) -> None:
    stack: List[cst.CSTNode] = [node]
    while stack:
        n = stack.pop()
        if type(n) is cst.Call:
            out[id(n)] = cls
        if type(n) not in _SCOPES:
            stack.extend(iter_children(n))


def guarded_calls(func: cst.FunctionDef, loops: Dict[int, bool]) -> Dict[int, str]:
    """id(call) -> ``once`` / ``periodic`` for every call the function (not a nested one) makes in
    a branch of that class; ``loops`` are its training loops (``frequency.training_loops``)."""
    tracker = FrequencyTracker()
    tracker.enter_frame(loops, False, func)
    out: Dict[int, str] = {}
    # statements only, with the tracker's enter/leave calls in the rule walker's order; the
    # expressions of a statement are read only where the branch around it is once or periodic
    stack: List[tuple] = [(func.body, False)]
    while stack:
        n, leaving = stack.pop()
        t = type(n)
        if leaving:
            if t in _BLOCKS:
                tracker.leave_block(n)
            elif t in _LOOPS:
                tracker.leave_loop(n)
            continue
        if t in _SCOPES:
            continue
        if t is cst.If:
            tracker.enter_if(n)
        elif t in _HANDLERS:
            tracker.enter_handler(n)
        elif t in _BLOCKS:
            tracker.enter_block(n)
        elif t in _LOOPS:
            tracker.enter_loop(n)
        if t in _BLOCKS or t in _LOOPS:
            stack.append((n, True))
        cls = tracker.branch()
        children = list(iter_children(n))
        for c in reversed(children):
            if _entered(type(c)):
                stack.append((c, False))
            elif cls in _GUARDS:
                _calls_in(c, cls, out)  # a test, an iterable, an expression statement's value
    tracker.leave_frame()
    return out
