"""TSL001 item-call."""

import libcst as cst

from torchsync_lint.inference.values import TENSOR, UNKNOWN
from torchsync_lint.rules.base import Rule


# The Tensor method this rule reports (read by rules.claims, checked against the catalog).
METHODS = frozenset(("item",))

class ItemCall(Rule):
    """
    ## What it does
    Flags `.item()` on a tensor (or on a value inference cannot place, in a file that uses torch).

    ## Why is this bad?
    `.item()` copies one element to the host. The host must wait until every queued kernel that
    produces it has finished, so the CPU stops launching work and the GPU runs dry. One `.item()`
    per step (for a log line, a loss value, a condition) can cost more than the step itself.

    ## Example
    ```python
    import torch


    def training_step(self, batch, batch_idx):
        loss = self.model(batch).mean()
        self.total += loss.item()
        return loss
    ```

    ## Use instead
    ```python
    import torch


    def training_step(self, batch, batch_idx):
        loss = self.model(batch).mean()
        self.total += loss.detach()  # stays on the GPU; read it once, every N steps
        return loss
    ```

    ## Fix safety
    Unsafe: the value becomes a tensor, so code that needs a Python number (formatting, `if`)
    must read it later, outside the step.

    ## Known problems
    An `.item()` on a receiver inference cannot type (an argument from another file) is reported
    too: in torch code that is nearly always a tensor. A CPU tensor's `.item()` does not sync, and
    is not reported when inference knows the tensor was made on the CPU.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: a sync waits
    for the sleep; `set_sync_debug_mode("warn")` names it `cudaMemcpyAsync` D2H.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
    - seeds/001 (masked loss), DESIGN.md section 4
    """

    code = "TSL001"
    name = "item-call"
    message = "`.item()` copies to the host and waits for the GPU; keep the value as a tensor and read it outside the step"

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if not (type(f) is cst.Attribute and f.attr.value in METHODS and not node.args):
            return
        v = self.ctx.value(f.value)
        if v.kind == TENSOR and v.device == "cpu":
            return
        if v.kind == TENSOR or (v.kind == UNKNOWN and self.ctx.index.mentions_torch):
            self.report(node)
