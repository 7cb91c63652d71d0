"""TSL005 builtin-min-max-on-tensor."""

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import gpu_tensor_by_evidence, has_kwarg, holds_gpu_tensor

# Builtins that compare their arguments (or the elements of one iterable) with `<` / `>` and
# branch on the result.
COMPARING_BUILTINS = frozenset(("builtins.max", "builtins.min", "builtins.sorted"))


class BuiltinMinMaxOnTensor(Rule):
    """
    ## What it does
    Flags Python's builtin `max()`, `min()` and `sorted()` when they compare tensors: a tensor
    argument next to another value (`max(1, t.sum())`, `min(a, b)`), or one tensor / list of
    tensors whose elements are compared (`max(t)`, `sorted(losses)`).

    ## Why is this bad?
    The builtins decide which value wins with a Python `if`: `t.sum() > 1` is a tensor, and
    branching on it calls `bool()`, which reads the value on the host and waits for every queued
    kernel (measured: `max(1, t.sum())` syncs). `max(t)` over a 1-D tensor iterates it and syncs
    once per element.

    ## Example
    ```python
    import torch.nn as nn


    class Loss(nn.Module):
        def forward(self, pred, mask):
            denom = max(1, mask.sum())
            return (pred * mask).sum() / denom
    ```

    ## Use instead
    ```python
    import torch.nn as nn


    class Loss(nn.Module):
        def forward(self, pred, mask):
            denom = mask.sum().clamp(min=1)  # or torch.clamp(mask.sum(), min=1)
            return (pred * mask).sum() / denom
    ```

    ## Fix safety
    Safe for numbers: `torch.clamp(t, min=1)` / `t.clamp(max=...)` replace `max`/`min` with a
    number, `torch.maximum(a, b)` / `torch.minimum(a, b)` compare two tensors elementwise,
    `t.max()` / `t.amax()` reduce one, `torch.sort` sorts one. The result is a tensor, not a
    Python number.

    ## Known problems
    Builtin `sum()` is not reported: it adds the elements with `+` and never branches, so
    `sum(losses)` stays on the GPU (one kernel per element, but no sync). `max(xs, key=f)` is not
    reported (the key decides what is compared). Reported only when inference says an argument is a
    tensor (or a list of tensors) not known to be on the CPU. Unannotated `forward` inputs after
    the first are tensors by convention only (ints and flags are passed too) and are not reported
    here; annotate them (`mask: Tensor`) to have them checked.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: a sync waits
    for the sleep; `set_sync_debug_mode("warn")` reports the `cudaMemcpyAsync` of `bool()`.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.clamp.html
    - https://pytorch.org/docs/stable/generated/torch.maximum.html
    - DESIGN.md section 4 (`max(1, t.sum())` syncs)
    """

    code = "TSL005"
    name = "builtin-min-max-on-tensor"
    message = (
        "builtin `max`/`min`/`sorted` compares tensors on the host and waits for the GPU; use "
        "`torch.clamp(t, min=...)`, `torch.maximum(a, b)`, `t.max()` or `torch.sort`"
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) not in COMPARING_BUILTINS or has_kwarg(node, "key"):
            return
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if not positional or len(positional) != len([a for a in node.args if a.keyword is None]):
            return
        values = [self.ctx.value(a.value) for a in positional]
        if len(values) == 1:
            compared = holds_gpu_tensor(values[0], evidence=True)
        else:  # `max(1, n)` of an unannotated forward input `n` rather says `n` is a number
            compared = any(gpu_tensor_by_evidence(v) for v in values)
        if compared:
            self.report(node)
