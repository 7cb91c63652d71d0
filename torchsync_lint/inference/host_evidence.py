"""Names a function's body shows to be on the host: handed to numpy as they are (``x.numpy()``,
``np.asarray(x)``: a CUDA tensor would raise), passed as they are to a project function whose
parameter is handed to numpy (``nib_to_sitk(row[np.newaxis], affine)``, in this file or another),
or iterated where the rows are (``for row in t: np.asarray(row)``: ``t`` too).

A mixin of the evaluator: another file's functions are read from their interfaces
(``host_params``), this file's from their bodies, recursively (a cycle reads what is known so far).
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from torchsync_lint.inference.defs import FunctionInfo, binding_names, bound_names, bound_once, positional_params
from torchsync_lint.inference.index_uses import KEEPING_METHODS
from torchsync_lint.inference.values import CPU, TENSOR, UNKNOWN, Value, tensor

# methods that may put their receiver elsewhere: `x = x.to(d)` is another tensor than the one handed on
MOVING = frozenset(("to", "cuda", "type", "new_tensor"))


def host_root(expr: cst.BaseExpression) -> Optional[str]:
    """The name whose tensor ``expr`` is a view or copy of on the same device (``row[np.newaxis]``,
    ``x.detach()``), or None."""
    while True:
        if type(expr) is cst.Subscript:
            expr = expr.value
        elif (type(expr) is cst.Call and type(expr.func) is cst.Attribute
              and expr.func.attr.value in KEEPING_METHODS):
            expr = expr.func.value
        else:
            break
    return expr.value if type(expr) is cst.Name else None


def placed_on_host(v: Value) -> Optional[Value]:
    """What host evidence makes of a value no device is known for: a host tensor (of a kind not
    known, a host tensor or array); None for a placed value or another file's reference."""
    if v.kind == TENSOR and v.device is None:
        return v.with_(device=CPU)
    if v.kind == UNKNOWN and v.ref is None:
        return tensor(CPU).with_(arraylike=True)
    return None


def rebound_only_to_itself(func: FunctionInfo, name: str, except_methods: frozenset = frozenset()) -> bool:
    """``name`` is never rebound in ``func``, or only to a method's result on itself
    (``model = model.to(device)``: the same module), other than ``except_methods``."""
    if name not in bound_names(func):
        return True
    for b in func.bindings:
        if name not in binding_names([b]):
            continue
        value = b[2] if b[0] == "assign" else None
        if not (type(value) is cst.Call and type(value.func) is cst.Attribute
                and type(value.func.value) is cst.Name and value.func.value.value == name
                and value.func.attr.value not in except_methods):
            return False
    return True


def path_assigned(func: FunctionInfo, name: str, attr: str) -> bool:
    """``name.attr = ...`` (or ``name`` rebound more than once) somewhere in ``func``: the path may hold
    another value than the one handed to numpy."""
    for b in func.bindings:
        for t in b[1] if isinstance(b[1], list) else [b[1]]:
            if type(t) is cst.Attribute and t.attr.value == attr and type(t.value) is cst.Name and t.value.value == name:
                return True
    return not bound_once(func, name)


class HostEvidence:
    """Mixin of ``evaluate.Evaluator`` (uses its ``index`` and ``project``)."""

    _host_memo: Dict[int, FrozenSet[str]]

    def host_names(self, func: FunctionInfo) -> FrozenSet[str]:
        memo = self._host_memo
        got = memo.get(id(func))
        if got is not None:
            return got
        memo[id(func)] = frozenset(func.host_uses)  # what a recursive call reads meanwhile
        out = set(func.host_uses)
        for key, call in func.arg_calls:
            params = self._host_params_at(key)
            if not params:
                continue
            positions = {i for i, _ in params if i is not None}
            names = {n for _, n in params}
            pos = 0
            for a in call.args:
                if a.star:
                    break
                hit = a.keyword.value in names if a.keyword is not None else pos in positions
                if a.keyword is None:
                    pos += 1
                root = host_root(a.value) if hit else None
                if root is not None:
                    out.add(root)
        for b in reversed(func.bindings):  # inner loops first: `for t in batch: for row in t:`
            if b[0] == "for" and type(b[1]) is cst.Name and b[1].value in out:
                root = host_root(b[2])
                if root is not None:
                    out.add(root)
        got = memo[id(func)] = frozenset(out)
        return got

    def host_params(self, func: FunctionInfo) -> List[Tuple[Optional[int], str]]:
        """Parameters the body shows to be on the host on entry."""
        names = self.host_names(func)
        if not names:
            return []
        return [(i, n) for i, n in positional_params(func)
                if n in names and n not in func.type_tested and rebound_only_to_itself(func, n, MOVING)]

    def _host_params_at(self, key: str) -> List[Tuple[Optional[int], str]]:
        local = self.index.functions.get(key)
        if local is not None:
            return self.host_params(local)
        if self.project is None or key.startswith(("torch.", "@")):
            return []
        loc = self.project.locate(key)
        if loc is None or loc[0] != "function":
            return []
        data = self.project.function_data(loc[1]) or {}
        return [(i, n) for i, n in data.get("host_params", ())]

