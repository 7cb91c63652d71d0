"""Functions a DataLoader calls to build its batches (``collate_fn=`` anywhere in the file): they run
on the host, in the loader's workers, on the samples a dataset returned, so the tensors they are
given live on the host whatever their annotations say."""

from __future__ import annotations

from typing import Set

import libcst as cst

from torchsync_lint.inference.defs import FunctionInfo
from torchsync_lint.inference.values import CPU, DICT, LIST, TENSOR, TUPLE, Value

KEYWORD = "collate_fn"


def collate_names(index) -> Set[str]:
    """Names passed as ``collate_fn=``: ``"pad_batch"`` for a function, ``"self._collate"`` for a method."""
    out: Set[str] = set()
    for sites in index.call_sites.values():
        for site in sites:
            for a in site.call.args:
                if a.keyword is None or a.keyword.value != KEYWORD:
                    continue
                v = a.value
                if type(v) is cst.Name:
                    out.add(v.value)
                elif type(v) is cst.Attribute and type(v.value) is cst.Name and v.value.value == "self":
                    out.add("self." + v.attr.value)
    return out


def collates(func: FunctionInfo, names: Set[str]) -> bool:
    if func.parent is not None:
        return False
    return ("self." + func.name in names) if func.is_method else func.name in names


def on_host(v: Value, unnamed_only: bool = False) -> Value:
    """``v`` with every tensor it holds on the host (``unnamed_only``: those of a device not known)."""
    if v.kind == TENSOR:
        return v.with_(device=CPU) if v.device is None or not unnamed_only else v
    if v.kind in (DICT, LIST, TUPLE) and (v.item is not None or v.elts or v.keys):
        return v.with_(item=on_host(v.item, unnamed_only) if v.item is not None else None,
                       elts=tuple(on_host(e, unnamed_only) for e in v.elts),
                       keys=tuple((k, on_host(x, unnamed_only)) for k, x in v.keys))
    return v
