"""TSL106 bincount."""

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, may_be_on_gpu

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.Tensor.scatter_add_": "default",
    "torch.Tensor.index_add_": "default",
}


# The calls this rule reports (read by rules.claims, checked against the catalog).
FUNCTIONS = frozenset(("torch.bincount", "torch.Tensor.bincount"))

class Bincount(Rule):
    """
    ## What it does
    Flags `torch.bincount(x)` and `x.bincount()` on a tensor that may be on the GPU, with or
    without `minlength=`.

    ## Why is this bad?
    The output has `max(x.max() + 1, minlength)` bins, so PyTorch reads `x.max()` (and checks
    `x.min() >= 0`) on the host before it can allocate the result: the CPU waits for every queued
    kernel. `minlength` is only a lower bound and does not avoid the read.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class ClassBalance(nn.Module):
        def forward(self, labels):
            return torch.bincount(labels, minlength=10)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class ClassBalance(nn.Module):
        def forward(self, labels):
            counts = torch.zeros(10, device=labels.device, dtype=torch.long)
            return counts.scatter_add_(0, labels, torch.ones_like(labels))
    ```

    ## Fix safety
    Unsafe: the number of bins becomes fixed. Labels at or above it make `scatter_add_` /
    `index_add_` fail with a device-side assertion instead of growing the output, and negative
    labels are no longer rejected. Use `weights` as the source (`scatter_add_(0, x, w)`) for a
    weighted count.

    ## Known problems
    A receiver that inference cannot type is not reported in the method form; in the function
    form an untyped first argument is. A tensor known to be on the CPU is not reported.

    ## Verify
    Measured on an H200 (torch 2.11): `torch.bincount(x)`, `torch.bincount(x, minlength=100)`
    and `x.bincount(weights=w)` take the whole queued `torch.cuda._sleep`; `scatter_add_` and
    `index_add_` into a zero tensor of known length return in well under a millisecond.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.bincount.html
    - DESIGN.md section 4
    """

    code = "TSL106"
    name = "bincount"
    message = (
        "`bincount` reads `x.max()` on the host to size its output, even with `minlength`; count into "
        "`torch.zeros(n, device=...).scatter_add_(0, idx, ones)` (or `index_add_`) with a known `n`"
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) == "torch.bincount":
            first = arg(node, 0, "input")
            if first is not None and may_be_on_gpu(self.ctx.value(first.value)):
                self.report(node)
        elif self.ctx.tensor_method(node) == "bincount" and self.ctx.maybe_gpu_tensor(node.func.value):
            self.report(node)
