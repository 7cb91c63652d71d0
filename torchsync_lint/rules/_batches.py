"""Batches cut from a store (shared by TSL202 and TSL204): a store inference cannot place, indexed
by something host-side, then moved to the GPU."""

from __future__ import annotations

import libcst as cst

from torchsync_lint.inference.defs import target_names
from torchsync_lint.inference.frequency import names_read
from torchsync_lint.inference.values import TENSOR, UNKNOWN
from torchsync_lint.rules._indexing import host_sequence, positions


def unplaced_store(ctx, expr: cst.Subscript) -> bool:
    """The subscripted value is one inference cannot place: of unknown kind, or a tensor of unknown
    device that is no module input by convention; not in a module's ``forward`` (its inputs are
    on the device already)."""
    store = ctx.value(expr.value)
    if not (store.kind == UNKNOWN and store.ref is None
            or store.kind == TENSOR and store.device is None and not store.assumed):
        return False
    fn = ctx.function
    return not (fn is not None and fn.name in ("forward", "__call__"))


def sliced_per_step(ctx, expr: cst.BaseExpression) -> bool:
    """``data[i:i + bs].to(d)`` in a loop over ``i``: a batch cut from a store each step and then
    moved is a host batch (a store already on the device would need no move), whatever the
    store's type."""
    if type(expr) is not cst.Subscript or not unplaced_store(ctx, expr):
        return False
    targets = set()
    for loop in ctx.open_loops():
        if type(loop) is cst.For:
            targets |= target_names(loop.target)
    if not targets:
        return False
    return any(names_read(el.slice) & targets for el in expr.slice)


def gathered_by_host_index(ctx, expr: cst.BaseExpression) -> bool:
    """``x[idx].to(d)`` with ``idx`` a host sequence (a CPU index tensor, a numpy array, a list): on
    the host, the rows are copied to the device; on the device, the index is (TSL201). Either
    copy waits."""
    if type(expr) is not cst.Subscript or not unplaced_store(ctx, expr):
        return False
    return any(host_sequence(v) is not None for v in positions(ctx, expr))
