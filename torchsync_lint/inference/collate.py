"""Functions a DataLoader calls to build its batches (``collate_fn=`` anywhere in the file): they run
on the host, in the loader's workers, on the samples a dataset returned, so the tensors they are
given live on the host whatever their annotations say."""

from __future__ import annotations

from typing import Set

import libcst as cst

from torchsync_lint.inference.defs import FunctionInfo
from torchsync_lint.inference.values import CPU, Value, map_tensors

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
    return map_tensors(v, lambda t: t.with_(device=CPU) if t.device is None or not unnamed_only else t)
