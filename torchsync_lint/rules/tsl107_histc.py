"""TSL107 histc-without-range."""

from typing import Optional

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, may_be_on_gpu, number_literal

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.histc": "min=0.0,max=1.0",
}


# The calls this rule reports (read by rules.claims, checked against the catalog).
FUNCTIONS = frozenset(("torch.histc", "torch.Tensor.histc"))
SYNC_CONDITION = "only without distinct literal `min=`/`max=` bounds (the range is read from the data)"

class HistcWithoutRange(Rule):
    """
    ## What it does
    Flags `torch.histc(x, ...)` and `x.histc(...)` on a tensor that may be on the GPU when the
    range is left to the data: `min` and `max` both missing, or literals that are equal (the
    default is `min=0, max=0`). Positional third and fourth arguments count.

    ## Why is this bad?
    When `min == max`, `histc` uses the data's own minimum and maximum as the range. It computes
    them on the device and copies them to the host to set up the bins, so the CPU waits for
    every queued kernel. With a fixed range nothing is read back.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class ActivationHistogram(nn.Module):
        def forward(self, x):
            return torch.histc(x, bins=64)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class ActivationHistogram(nn.Module):
        def forward(self, x):
            return torch.histc(x, bins=64, min=-8.0, max=8.0)  # values outside are ignored
    ```

    ## Fix safety
    Unsafe: values outside a fixed range are dropped instead of widening the bins. Choose a range
    that covers the data (clamp first to count the outliers in the end bins).

    ## Known problems
    Only literal bounds are compared: `min=lo, max=hi` with variables is assumed to be a real
    range and not reported. `torch.histogram` is not reported: it has no CUDA kernel and fails
    on GPU tensors. A tensor known to be on the CPU is not reported.

    ## Verify
    Measured on an H200 (torch 2.11): `x.histc()`, `torch.histc(x, bins=10)` and
    `torch.histc(x, 10, 0, 0)` take the whole queued `torch.cuda._sleep`;
    `torch.histc(x, 10, -3, 3)`, `x.histc(bins=10, min=-3, max=3)` and even
    `torch.histc(x, 10, min=-1)` (range [-1, 0]) return in well under a millisecond.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.histc.html
    - DESIGN.md section 4
    """

    code = "TSL107"
    name = "histc-without-range"
    message = (
        "`histc` without a `min`/`max` range reads the data's min and max on the host; "
        "pass a fixed range: `histc(x, bins, min=lo, max=hi)`"
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) == "torch.histc":
            data = arg(node, 0, "input")
            offset = 1
        elif self.ctx.tensor_method(node) == "histc":
            data = cst.Arg(node.func.value)
            offset = 0
        else:
            return
        if data is None or not may_be_on_gpu(self.ctx.value(data.value)):
            return
        low = self._bound(node, offset + 1, "min")
        high = self._bound(node, offset + 2, "max")
        if low is not None and low == high:
            self.report(node)

    @staticmethod
    def _bound(call: cst.Call, position: int, keyword: str) -> Optional[float]:
        """The literal value of a bound (0 when missing), None when it is not a literal."""
        a = arg(call, position, keyword)
        return 0.0 if a is None else number_literal(a.value)
