"""TSL104 masked-select."""

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, may_be_on_gpu

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.Tensor.masked_fill": "default",
}


# The calls this rule reports (read by rules.claims, checked against the catalog).
FUNCTIONS = frozenset(("torch.masked_select", "torch.Tensor.masked_select"))

class MaskedSelect(Rule):
    """
    ## What it does
    Flags `torch.masked_select(x, mask)` and `x.masked_select(mask)` on a tensor that may be on
    the GPU.

    ## Why is this bad?
    The result has one element per `True` in the mask, a number only the GPU knows. PyTorch
    counts the mask on the device and copies the count to the host to allocate the output, so
    the CPU waits for every queued kernel before it can launch the next one.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class PositiveMean(nn.Module):
        def forward(self, x):
            return torch.masked_select(x, x > 0).mean()
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class PositiveMean(nn.Module):
        def forward(self, x):
            keep = x > 0
            total = torch.where(keep, x, 0).sum()  # same shape as x: no count needed
            return total / keep.sum().clamp(min=1)
    ```

    ## Fix safety
    Unsafe: `torch.where(mask, x, 0)` and `x.masked_fill(~mask, 0)` keep the input's shape and
    fill the unselected places, so code after it must ignore the filler (weight it by the mask,
    sum instead of taking a mean over the selected elements).

    ## Known problems
    A receiver that inference cannot type is not reported in the method form; in the function
    form an untyped first argument is. A tensor known to be on the CPU is not reported.

    ## Verify
    Measured on an H200 (torch 2.11): both forms take the whole queued `torch.cuda._sleep`;
    `torch.where(mask, x, 0)` and `masked_fill` return in well under a millisecond.
    `set_sync_debug_mode("warn")` reports the copy of the count.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.masked_select.html
    - DESIGN.md section 4
    """

    code = "TSL104"
    name = "masked-select"
    message = (
        "`masked_select` has a data-dependent size, so the host waits for the GPU to count the mask; "
        "keep the shape with `torch.where(mask, x, 0)` or `masked_fill`"
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) == "torch.masked_select":
            first = arg(node, 0, "input")
            if first is not None and may_be_on_gpu(self.ctx.value(first.value)):
                self.report(node)
        elif self.ctx.tensor_method(node) == "masked_select" and self.ctx.maybe_gpu_tensor(node.func.value):
            self.report(node)
