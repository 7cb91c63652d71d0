"""Instances of third-party training utilities whose calls were measured on a GPU (torchmetrics
metrics, TensorBoard's ``SummaryWriter``, Lightning's ``TensorBoardLogger``): what their constructor
calls evaluate to. Only classes that ``catalog/data/training_utils.json`` names are recognised.

A metric (an ``nn.Module``: ``.to(device)`` and ``.cuda()`` keep it) is
``Value(MODULE, cls="<measured class>#<tag>")``, the tag naming the measured variant
its constructor's literal arguments match (``torchmetrics.Accuracy|task='multiclass',num_classes=10``),
or ``cls="<measured class>"`` alone when no measured variant matches. A ``MetricCollection`` keeps
its members' values in ``elts`` (from a list, tuple or dict literal). Loggers are
``Value(OBJECT, cls=<their canonical class>)``.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from torchsync_lint.catalog import training_utils as data
from torchsync_lint.inference.values import MODULE, OBJECT, Value

TAG = "#"


def literal(expr: cst.BaseExpression):
    """The Python value of a literal argument, else ``data.NOT_LITERAL``."""
    if type(expr) is cst.SimpleString:
        return expr.evaluated_value
    if type(expr) in (cst.Integer, cst.Float):
        return expr.evaluated_value
    if type(expr) is cst.Name and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        inner = literal(expr.expression)
        return -inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else data.NOT_LITERAL
    return data.NOT_LITERAL


def instance(evaluator, q: str, call: cst.Call, scope) -> Optional[Value]:
    """What ``call`` (of the class ``q``) builds, when ``q`` is a measured training utility; else None."""
    written = data.metric_group(q)
    if written is not None:
        if any(a.star for a in call.args):
            return Value(MODULE, cls=written)
        if written == data.COLLECTION:
            return Value(MODULE, cls=written, elts=_members(evaluator, call, scope))
        positional = [literal(a.value) for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: literal(a.value) for a in call.args if a.keyword is not None}
        tag = data.metric_variant(written, positional, keywords)
        return Value(MODULE, cls=written if tag is None else written + TAG + tag)
    logger = data.logger_class(q)
    if logger is not None:
        return Value(OBJECT, cls=logger)
    return None


def _members(evaluator, call: cst.Call, scope) -> tuple:
    first = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "metrics"), None)
    if type(first) in (cst.List, cst.Tuple):
        exprs = [el.value for el in first.elements if type(el) is not cst.StarredElement]
        if len(exprs) != len(first.elements):
            return ()
    elif type(first) is cst.Dict:
        exprs = [el.value for el in first.elements if type(el) is cst.DictElement]
        if len(exprs) != len(first.elements):
            return ()
    elif first is not None:
        exprs = [first]  # one metric
    else:
        return ()
    return tuple(evaluator.infer(e, scope) for e in exprs)


def metric_tag(v: Value) -> Optional[str]:
    """The measured variant of a metric value, or None."""
    if v.kind != MODULE or not v.cls or TAG not in v.cls:
        return None
    return v.cls.split(TAG, 1)[1]


def is_collection(v: Value) -> bool:
    return v.kind == MODULE and v.cls == data.COLLECTION
