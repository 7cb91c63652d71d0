"""TSL403 tensor-equality-check."""

import libcst as cst

from torchsync_lint.rule import Rule
from torchsync_lint.rules._common import arg, may_be_on_gpu

NAMES = ("equal", "allclose", "is_nonzero")
FUNCTIONS = frozenset(p + n for p in ("torch.", "torch.Tensor.") for n in NAMES)


class TensorEqualityCheck(Rule):
    """
    ## What it does
    Flags `torch.equal(a, b)`, `torch.allclose(a, b)`, `torch.is_nonzero(t)` and the method forms
    `a.equal(b)`, `a.allclose(b)`, `t.is_nonzero()` on tensors that may be on the GPU.

    ## Why is this bad?
    They return a Python `bool`: PyTorch compares on the device and copies the answer to the
    host, so the CPU waits for every queued kernel. A sanity check inside a step (are the
    weights still tied? is the mask all ones?) then costs a full pipeline drain each time.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class Tied(nn.Module):
        def forward(self, x, y):
            if torch.allclose(x, y):
                return x
            return (x + y) / 2
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class Tied(nn.Module):
        def forward(self, x, y):
            same = torch.isclose(x, y).all()  # a bool tensor: stays on the GPU
            return torch.where(same, x, (x + y) / 2)
    ```

    ## Fix safety
    Unsafe: the answer becomes a tensor, so Python control flow on it must become tensor ops
    (`torch.where`, multiplying by the mask). For an invariant, `torch._assert_async(cond)`
    fails the next synchronising call instead of stopping the host now; or check it every N
    steps, outside the step.

    ## Known problems
    The function forms are not reported when every argument is known to be on the CPU; the
    method forms need a receiver inference knows to be a tensor. `torch.testing.assert_close`
    syncs too but is a test helper and is not reported.

    ## Verify
    Measured on an H200 (torch 2.11): `torch.equal`, `torch.allclose`, `x.equal(y)`,
    `x.allclose(y)` and `x.sum().is_nonzero()` take the whole queued `torch.cuda._sleep`;
    `torch.isclose(x, y).all()` and `torch._assert_async(...)` return in well under a millisecond.
    `set_sync_debug_mode("warn")` reports the copy of the answer.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.equal.html
    - https://pytorch.org/docs/stable/generated/torch.allclose.html
    - DESIGN.md section 4
    """

    code = "TSL403"
    name = "tensor-equality-check"
    message = (
        "`equal`/`allclose`/`is_nonzero` return a Python bool, so the host waits for the GPU; keep the "
        "answer on the device (`torch.isclose(a, b).all()`, `torch.where`) or use `torch._assert_async`"
    )

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q in FUNCTIONS:
            operands = [arg(node, 0, "input"), arg(node, 1, "other")]
            if any(a is not None and may_be_on_gpu(self.ctx.value(a.value)) for a in operands):
                self.report(node)
        elif q is None and self.ctx.tensor_method(node) in NAMES and self.ctx.maybe_gpu_tensor(node.func.value):
            self.report(node)
