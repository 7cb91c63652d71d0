"""Tensor containers of another library (tensordict's ``TensorDict``): a dict of tensors under
string keys that behaves as a tensor along its batch dimensions.

What its methods and properties return is data generated from the library's annotations
(``data/tensor_containers.json``, ``python -m torchsync_lint.inference.data.generate_tensor_containers``):
``td["next", "done"]`` and ``td.get("reward")`` are tensors (leaves), ``td.to(d)``, ``td[mask]`` and
``td.select(...)`` containers, ``td.any()`` a Python bool, ``td.batch_size`` a size. A container
is a DICT value whose ``cls`` is ``CONTAINER`` and whose ``item`` is its leaves' value.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Callable, Optional

import libcst as cst

from torchsync_lint.inference.values import (
    DEVICE,
    DICT,
    LIST,
    NUMBER,
    SIZE,
    STR,
    TUPLE,
    UNKNOWN,
    UNKNOWN_VALUE,
    Value,
    tensor,
)

DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tensor_containers.json")
CONTAINER = "tensordict.TensorDictBase"


@functools.cache
def _data() -> dict:
    with open(DATA_PATH) as fh:
        return json.load(fh)


@functools.cache
def _classes() -> frozenset:
    return frozenset(_data()["classes"])


def is_container_class(qualname: Optional[str]) -> bool:
    return qualname is not None and qualname.startswith("tensordict.") and qualname in _classes()


def container(device: Optional[str] = None) -> Value:
    """A container whose leaves are tensors on ``device`` (None: not known)."""
    return Value(DICT, cls=CONTAINER, item=tensor(device), device=device)


def is_container(v: Value) -> bool:
    return v.kind == DICT and v.cls == CONTAINER


def method_result(recv: Value, name: str) -> Value:
    """What ``td.name(...)`` returns, by the library's annotation of the method."""
    if name == "items":
        return Value(LIST, item=Value(TUPLE, elts=(Value(STR), recv.item or UNKNOWN_VALUE)))
    if name == "values":
        return Value(LIST, item=recv.item)
    if name == "keys":
        return Value(LIST, item=Value(STR))
    return _of_kind(_data()["methods"].get(name), recv)


def property_value(recv: Value, name: str) -> Value:
    return _of_kind(_data()["properties"].get(name), recv)


def _of_kind(kind: Optional[str], recv: Value) -> Value:
    if kind == "container":
        return recv
    if kind == "item":
        return recv.item or UNKNOWN_VALUE
    if kind == "bool":
        return Value(NUMBER, dtype="bool")
    if kind == "int":
        return Value(NUMBER, dtype="int")
    if kind == "containers":
        return Value(TUPLE, item=recv)
    if kind == "size":
        return Value(SIZE)
    if kind == "device":
        return Value(DEVICE, device=recv.device)
    return UNKNOWN_VALUE


def subscript(recv: Value, e: cst.Subscript, infer: Callable[[cst.BaseExpression], Value]) -> Value:
    """``td["obs"]``, ``td["next", "done"]``, ``td[self.reward_key]``: a leaf; ``td[mask]``,
    ``td[:, 0]``, ``td[idx]``: a container (its batch dimensions indexed). A key inference cannot
    see is taken for a key (keys are mostly held in attributes; an index is mostly a tensor)."""
    if any(type(el.slice) is not cst.Index for el in e.slice):
        return recv  # a slice: batch dimensions
    parts = [el.slice.value for el in e.slice]
    if len(parts) == 1 and type(parts[0]) is cst.Tuple:
        parts = [el.value for el in parts[0].elements]  # td[("next", "done")]
    for p in parts:
        if type(p) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
            continue
        if type(p) in (cst.Integer, cst.Ellipsis) or (type(p) is cst.Name and p.value == "None"):
            return recv
        v = infer(p)
        if v.kind not in (STR, UNKNOWN):
            return recv
    return recv.item or UNKNOWN_VALUE
