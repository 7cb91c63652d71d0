"""TSL102 unique."""

import libcst as cst

from torchsync_lint.inference.values import CPU
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, may_be_on_gpu

FUNCTIONS = frozenset(("torch.unique", "torch.unique_consecutive", "torch.functional.unique",
                       "torch.functional.unique_consecutive"))
METHODS = frozenset(("unique", "unique_consecutive"))


class Unique(Rule):
    """
    ## What it does
    Flags `torch.unique`, `Tensor.unique()`, `torch.unique_consecutive` and
    `Tensor.unique_consecutive()` on tensors that may live on the GPU.

    ## Why is this bad?
    The number of distinct values is only known once the GPU has computed it, and PyTorch needs
    it on the host to allocate the output: the CPU waits for every queued kernel, in every step.
    Code often calls `unique` only to count classes or to test "is there more than one value",
    which needs no host round trip.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class MaskedLoss(nn.Module):
        def forward(self, loss, target):
            num_unique = torch.unique(target).numel()
            return loss * (num_unique > 1)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class MaskedLoss(nn.Module):
        def forward(self, loss, target):
            ordered, _ = torch.sort(target.flatten())
            num_unique = torch.count_nonzero(ordered[1:] - ordered[:-1]) + 1
            return torch.where(num_unique > 1, loss, 0.0 * loss)
    ```

    ## Fix safety
    Unsafe: the replacement depends on what the unique values are used for. To count distinct
    values, sort and count the non-zero differences (as above); with a known number of classes,
    `torch.bincount(t, minlength=C)` gives per-class counts of fixed size (bincount syncs on its
    own, see TSL106: prefer `torch.zeros(C, device=d).scatter_add_(0, t, ones)`); a presence mask
    is `counts > 0`.

    ## Known problems
    A call on a tensor inference knows to be on the CPU is not reported. A `.unique()` method on
    a value inference cannot type is not reported: pandas and numpy objects have one too.

    ## Verify
    `torchsync-lint --verify` times the call after a queued `torch.cuda._sleep`: the host waits
    for the sleep; `set_sync_debug_mode("warn")` reports the device-to-host copy of the size.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.unique.html
    - seeds/001 (masked loss), DESIGN.md section 4
    """

    code = "TSL102"
    name = "unique"
    message = (
        "`unique` has a data-dependent size, so the host waits for the GPU; count distinct values with "
        "`sort` + `count_nonzero` of the differences, or per-class counts of a known class count"
    )

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q in FUNCTIONS:
            first = arg(node, 0, "input")
            if first is not None:
                v = self.ctx.value(first.value)
                if may_be_on_gpu(v):
                    self.report(node)
            return
        if q is None and self.ctx.tensor_method(node) in METHODS:
            if self.ctx.value(node.func.value).device != CPU:
                self.report(node)
