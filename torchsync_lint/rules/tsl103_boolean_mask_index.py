"""TSL103 boolean-mask-index."""

from typing import List

import libcst as cst

from torchsync_lint.inference.values import CPU, NONE, NUMBER, TENSOR, UNKNOWN, Value, unpacked
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._indexing import (
    SLICE,
    indexes_device_tensor,
    is_bool_mask,
    is_device_bool_mask,
    positions,
)

WRITE_MESSAGE = (
    "assigning a tensor through a boolean mask runs `nonzero` on the mask and waits for the GPU; "
    "use `torch.where(mask, value, x)`, or `x.masked_fill_(mask, number)` / `x[mask] = number`"
)
AUG_MESSAGE = (
    "`x[mask] op= v` reads and writes through the mask, and each waits for the GPU; "
    "use `torch.where(mask, x op v, x)` or `x op= v * mask`"
)

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.Tensor.masked_fill": "default",
}


class BooleanMaskIndex(Rule):
    """
    ## What it does
    Flags indexing a tensor that may live on the GPU with a boolean mask tensor at any index
    position (`x[mask]`, `x[:, mask]`, `x[mask, 0]`), and assignments through such a mask whose
    value is a GPU tensor (`x[mask] = y[mask]`, `x[mask] = zero_dim_gpu_tensor`) or that are
    augmented (`x[mask] += 1`).

    ## Why is this bad?
    The result of `x[mask]` has as many elements as the mask has `True` values, which only the
    GPU knows: PyTorch runs `nonzero` on the mask and copies the count to the host, and the CPU
    waits for every queued kernel. Assigning a GPU tensor through a mask goes through the same
    `nonzero`; `x[mask] += 1` reads *and* writes through the mask and waits twice (measured on
    an H200). In a training step the wait repeats every step, and the backward of `x[mask]`
    waits again.

    ## Example
    ```python
    import torch.nn as nn


    class MaskedLoss(nn.Module):
        def forward(self, pred, target):
            mask = target != -1
            return (pred[mask] - target[mask]).abs().mean()
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class MaskedLoss(nn.Module):
        def forward(self, pred, target):
            mask = target != -1
            err = torch.where(mask, (pred - target).abs(), 0.0)
            return err.sum() / mask.sum().clamp(min=1)
    ```

    ## Fix safety
    Unsafe: a masked read changes the shape, and code after it must work on the full tensor
    with the mask applied (`torch.where`, multiply by the mask, `masked_fill`); reductions need
    the count of selected elements as a tensor (`mask.sum()`), as above.

    ## Known problems
    `x[mask] = <Python number>` (and a CPU scalar tensor value) is not reported: PyTorch turns it
    into `masked_fill_`, which does not sync (measured). The same assignment with a second index
    tensor next to the mask does sync and is reported. The mask must be known to be boolean (a
    comparison, `~m`, `m & n`, `isnan`, `.bool()`, a `BoolTensor` annotation); a tensor of
    unknown dtype used as an index is not reported. A mask known to be on the CPU is TSL201.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: the host
    waits for the sleep; `set_sync_debug_mode("warn")` reports the copy of the `nonzero` count.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.where.html
    - https://pytorch.org/docs/stable/generated/torch.Tensor.masked_fill_.html
    - seeds/001 (masked loss), DESIGN.md section 4
    """

    code = "TSL103"
    name = "boolean-mask-index"
    message = (
        "indexing with a boolean mask has a data-dependent size, so the host waits for the GPU; "
        "keep the shape: `torch.where(mask, a, b)`, `masked_fill`, or multiply by the mask"
    )

    def _masked(self, node: cst.Subscript) -> List[Value]:
        """The index positions when ``node`` indexes a device tensor with a device boolean mask."""
        index = positions(self.ctx, node)
        if any(is_device_bool_mask(v) for v in index) and indexes_device_tensor(self.ctx, node, index):
            return index
        return []

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if not self.ctx.is_store(node) and self._masked(node):
            self.report(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            t = target.target
            if type(t) is cst.Subscript:
                self._check_write(t, lambda: self.ctx.value(node.value))
            elif type(t) in (cst.Tuple, cst.List) and not any(type(el) is cst.StarredElement for el in t.elements):
                # `out[inside], logdet[inside] = spline(...)`: each masked target is a write
                n = len(t.elements)
                for i, el in enumerate(t.elements):
                    if type(el.value) is cst.Subscript:
                        self._check_write(el.value, lambda i=i: unpacked(self.ctx.value(node.value), i, n))

    def _check_write(self, t: cst.Subscript, value) -> None:
        index = self._masked(t)
        if index and not self._masked_fill(index, value()):
            self.report(t, WRITE_MESSAGE)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if type(node.target) is cst.Subscript and self._masked(node.target):
            self.report(node.target, AUG_MESSAGE)

    @staticmethod
    def _masked_fill(index: List[Value], value: Value) -> bool:
        """PyTorch's fast path: one mask, no other index tensor, and a host scalar value."""
        masks = [v for v in index if is_bool_mask(v)]
        # ints, slices, None and `...` are applied before the mask; an unknown position gets the
        # benefit of the doubt
        others = [v for v in index if not is_bool_mask(v) and v.kind not in (SLICE.kind, NUMBER, NONE, UNKNOWN)]
        if len(masks) != 1 or others:
            return False
        # a Python number, or a CPU tensor (a scalar in practice); unknown values are not reported
        return not (value.kind == TENSOR and value.device != CPU)
