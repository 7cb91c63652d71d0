"""``collections.namedtuple("Out", ["loss", "logits"])`` and the functional
``typing.NamedTuple("Out", [("loss", Tensor), ...])``: the name is a constructor (a FUNC value
whose ``cls`` lists the fields), an instance a TUPLE whose elements are read by field name."""

from __future__ import annotations

from typing import Callable, Optional, Tuple

import libcst as cst

from torchsync_lint.inference.values import FUNC, TUPLE, UNKNOWN_VALUE, Value

FACTORIES = frozenset(("collections.namedtuple", "typing.NamedTuple", "typing_extensions.NamedTuple"))
PREFIX = "namedtuple:"


def constructor(call: cst.Call) -> Optional[Value]:
    """The FUNC value of a ``namedtuple(...)`` call whose fields are written out, else None."""
    fields = _fields(call)
    return Value(FUNC, cls=PREFIX + ",".join(fields)) if fields else None


def construct(q: str, call: cst.Call, infer: Callable[[cst.BaseExpression], Value]) -> Value:
    """``Out(a, logits=b)``: a TUPLE of the arguments in field order (unknown where not given)."""
    names = q[len(PREFIX):].split(",")
    elts = [UNKNOWN_VALUE] * len(names)
    positional = 0
    for a in call.args:
        if a.star:
            return Value(TUPLE, cls=q)
        if a.keyword is None:
            if positional < len(elts):
                elts[positional] = infer(a.value)
            positional += 1
        elif a.keyword.value in names:
            elts[names.index(a.keyword.value)] = infer(a.value)
    return Value(TUPLE, elts=tuple(elts), cls=q)


def field(v: Value, attr: str) -> Optional[Value]:
    """``out.loss`` of a named tuple instance; None if ``v`` is none."""
    if v.kind != TUPLE or not v.cls or not v.cls.startswith(PREFIX):
        return None
    names = v.cls[len(PREFIX):].split(",")
    if attr in names and len(v.elts) == len(names):
        return v.elts[names.index(attr)]
    return UNKNOWN_VALUE


def _fields(call: cst.Call) -> Tuple[str, ...]:
    args = [a for a in call.args if a.keyword is None or a.keyword.value in ("field_names", "fields")]
    if len(args) < 2:
        return ()
    spec = args[1].value
    if type(spec) is cst.SimpleString:  # "loss logits" / "loss, logits"
        text = spec.evaluated_value
        return tuple(n for n in str(text).replace(",", " ").split()) if isinstance(text, str) else ()
    if type(spec) in (cst.List, cst.Tuple):
        out = []
        for el in spec.elements:
            e = el.value
            if type(e) in (cst.Tuple, cst.List) and e.elements:  # ("loss", Tensor)
                e = e.elements[0].value
            if type(e) is not cst.SimpleString or not isinstance(e.evaluated_value, str):
                return ()
            out.append(e.evaluated_value)
        return tuple(out)
    return ()
