"""What a subscript's index is made of: shared by the indexing rules (TSL103, TSL201, TSL203).

``x[a, b]`` indexes positions ``a`` and ``b``; so does ``x[(a, b)]`` and ``x[idx]`` when ``idx``
holds a tuple (Python passes the tuple itself as the index). A tuple *inside* the index
(``x[(0, 2), :]``) is a sequence index, like a list.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from torchsync_lint.inference import containers
from torchsync_lint.inference.values import (
    CPU,
    LIST,
    NDARRAY,
    RANGE,
    TENSOR,
    TENSOR_SEQ,
    TUPLE,
    UNKNOWN,
    Value,
)

SLICE = Value("slice")


def positions(ctx, node: cst.Subscript) -> List[Value]:
    """The value at each index position of ``node`` (``SLICE`` for a slice)."""
    elements = node.slice
    if len(elements) == 1 and type(elements[0].slice) is cst.Index:
        v = ctx.value(elements[0].slice.value)
        if v.kind == TUPLE:  # x[(a, b)] / x[idx] with idx = (a, b): the tuple is the index
            return list(v.elts)
        return [v]
    out = []
    for el in elements:
        out.append(ctx.value(el.slice.value) if type(el.slice) is cst.Index else SLICE)
    return out


def is_bool_mask(v: Value) -> bool:
    return v.kind == TENSOR and v.dtype == "bool"


def is_device_bool_mask(v: Value) -> bool:
    return is_bool_mask(v) and v.device != CPU


def is_device_int_index(v: Value) -> bool:
    """An integer index tensor not known to be on the CPU, or a tuple of them (``nonzero(as_tuple=True)``)."""
    return v.kind in (TENSOR, TENSOR_SEQ) and v.dtype == "int" and v.device != CPU


def host_sequence(v: Value) -> Optional[str]:
    """What kind of host-side sequence ``v`` is, when used at one index position (else None)."""
    if v.kind == RANGE:
        return "a Python `range`"
    if v.kind in (LIST, TUPLE):
        if any(e.kind in (TENSOR, TENSOR_SEQ, UNKNOWN) for e in v.elts):
            return None  # a sequence of tensors is read as a tuple of index tensors
        if not v.elts and (v.item is None or v.item.kind in (TENSOR, TENSOR_SEQ, UNKNOWN)):
            return None  # members unknown: may be slices or tensors (esmfold's list of slice())
        return "a Python list" if v.kind == LIST else "a Python tuple"
    if v.kind == NDARRAY:
        return "a numpy array"
    if v.kind == TENSOR and v.device == CPU and not v.zero_dim:
        return "a CPU tensor"  # a 0-dim one is read on the host as an int (truth row asint-22)
    return None


def indexes_device_tensor(ctx, node: cst.Subscript, index: List[Value]) -> bool:
    """The subscripted value is a tensor that may live on the GPU.

    A base inference cannot type counts when the index itself holds a tensor that may live on
    the GPU: only tensors are indexed by tensors.
    """
    base = ctx.value(node.value)
    if base.kind == TENSOR:
        return base.device != CPU
    if containers.is_container(base):
        return base.device != CPU  # a TensorDict indexes each of its leaves
    if base.kind == UNKNOWN:
        return any(v.kind in (TENSOR, TENSOR_SEQ) and v.device != CPU for v in index)
    return False
