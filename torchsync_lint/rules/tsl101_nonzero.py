"""TSL101 nonzero."""

import libcst as cst

from torchsync_lint.inference.values import CPU
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, may_be_on_gpu

FUNCTIONS = frozenset(("torch.nonzero", "torch.argwhere"))
METHODS = frozenset(("nonzero", "argwhere"))

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.Tensor.masked_fill": "default",
}


class Nonzero(Rule):
    """
    ## What it does
    Flags `torch.nonzero`, `Tensor.nonzero()` (also with `as_tuple=True`), `torch.argwhere`,
    `Tensor.argwhere()` and one-argument `torch.where(cond)` on tensors that may live on the GPU.

    ## Why is this bad?
    The number of rows these ops return depends on the data. PyTorch must know it to allocate
    the result, so it counts the non-zero elements on the GPU and copies the count to the host:
    the CPU waits until every queued kernel has finished. `torch.where(cond)` with one argument
    is `nonzero(cond, as_tuple=True)` under another name. The indices are usually only used to
    read or write the selected elements, which sync-free ops do directly.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class IgnoreBackground(nn.Module):
        def forward(self, target):
            inds = torch.nonzero(target == 0, as_tuple=True)
            out = target.clone()
            out.index_put_(inds, torch.full((), -1, device=target.device))
            return out
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class IgnoreBackground(nn.Module):
        def forward(self, target):
            return torch.where(target == 0, torch.full_like(target, -1), target)
    ```

    ## Fix safety
    Unsafe: the rewrite depends on what the indices are used for. `torch.where(cond, a, b)`,
    `masked_fill` or multiplying by the mask keep the shape of the input; when a fixed-size
    result is what you need, `torch.nonzero_static(cond, size=n)` pads with `fill_value`
    instead of syncing.

    ## Known problems
    A call on a tensor inference knows to be on the CPU is not reported (nothing to wait for).
    A `.nonzero()` method on a value inference cannot type is not reported: numpy arrays have
    one too. `nonzero_static`, `count_nonzero` and three-argument `torch.where` do not sync and
    are never reported.

    ## Verify
    `torchsync-lint --verify` times the call after a queued `torch.cuda._sleep`: the host waits
    for the sleep; `set_sync_debug_mode("warn")` reports the `cudaMemcpyAsync` of the count.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nonzero.html
    - https://pytorch.org/docs/stable/generated/torch.nonzero_static.html
    - seeds/001 (masked loss), DESIGN.md section 4
    """

    code = "TSL101"
    name = "nonzero"
    message = (
        "`nonzero`/`argwhere`/`where(cond)` has a data-dependent size, so the host waits for the GPU to count; "
        "use `torch.where(cond, a, b)`, `masked_fill`, or `torch.nonzero_static(cond, size=n)`"
    )

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q in FUNCTIONS or (q == "torch.where" and self._one_argument(node)):
            first = arg(node, 0, "input") or arg(node, 0, "condition")
            if first is not None and may_be_on_gpu(self.ctx.value(first.value)):
                self.report(node)
            return
        if q is None and self.ctx.tensor_method(node) in METHODS:
            if self.ctx.value(node.func.value).device != CPU:
                self.report(node)

    @staticmethod
    def _one_argument(call: cst.Call) -> bool:
        return len(call.args) == 1 and not call.args[0].star
