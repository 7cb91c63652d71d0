"""TSL002 tolist-call."""

import libcst as cst

from torchsync_lint.rules.base import Rule


# The Tensor method this rule reports (read by rules.claims, checked against the catalog).
METHODS = frozenset(("tolist",))

class TolistCall(Rule):
    """
    ## What it does
    Flags `.tolist()` on a tensor that is not known to live on the CPU.

    ## Why is this bad?
    `.tolist()` copies the whole tensor into Python objects on the host. The host must wait until
    every queued kernel that produces the tensor has finished: a full synchronisation, plus one
    Python object per element. Inside a training step it is often hidden in an argument, as in
    `torch.split(x, counts.tolist())`, which needs Python ints for the split sizes.

    ## Example
    ```python
    import torch.nn as nn


    class Head(nn.Module):
        def forward(self, logits):
            labels = logits.argmax(-1).tolist()
            return logits, labels
    ```

    ## Use instead
    ```python
    import torch.nn as nn


    class Head(nn.Module):
        def forward(self, logits):
            labels = logits.argmax(-1)  # stays on the GPU; call .cpu() once, after the step
            return logits, labels
    ```

    ## Fix safety
    Unsafe: the value stays a tensor, so code that needs Python ints (split sizes, dict keys,
    JSON) must get them later, with one `.cpu()` outside the step, or be rewritten with tensor
    ops (`torch.split` with sizes from `.shape`, `index_select`, `scatter`).

    ## Known problems
    Reported only when inference says the receiver is a tensor: `.tolist()` of a numpy array, a
    pandas object or a value from another file is not reported. `.cpu().tolist()` is reported
    once, on the `.cpu()` (TSL003); `.tolist()` of a tensor made on the CPU is not reported.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: a sync waits
    for the sleep; `set_sync_debug_mode("warn")` reports the device-to-host `cudaMemcpyAsync`.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.Tensor.tolist.html
    - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
    """

    code = "TSL002"
    name = "tolist-call"
    message = (
        "`.tolist()` copies the tensor to the host and waits for the GPU; keep it a tensor, "
        "or call `.cpu()` once outside the step"
    )

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if type(f) is cst.Attribute and f.attr.value in METHODS and not node.args:
            if self.ctx.maybe_gpu_tensor(f.value):
                self.report(f.attr)  # the method name: in a chain split over lines, the sync's line
