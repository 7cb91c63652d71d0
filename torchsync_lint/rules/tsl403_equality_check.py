"""TSL403 tensor-equality-check."""

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, may_be_on_gpu, same_operand

NAMES = ("equal", "allclose", "is_nonzero")
FUNCTIONS = frozenset(p + n for p in ("torch.", "torch.Tensor.") for n in NAMES)
ASSERTIONS = frozenset(("torch.testing.assert_close", "torch.testing.assert_allclose"))
ASSERT_MESSAGE = (
    "`torch.testing.assert_close` reads the comparison on the host, so it waits for the GPU; check on the "
    "device with `torch._assert_async(torch.isclose(a, b).all())`"
)


class TensorEqualityCheck(Rule):
    """
    ## What it does
    Flags `torch.equal(a, b)`, `torch.allclose(a, b)`, `torch.is_nonzero(t)`, the method forms
    `a.equal(b)`, `a.allclose(b)`, `t.is_nonzero()`, and `torch.testing.assert_close(a, b)`, on
    tensors that may be on the GPU.

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
    method forms need a receiver inference knows to be a tensor. `torch.testing.assert_close` in
    a test is reported too (tests run in code of unknown temperature): it does sync, but a test
    rarely cares; select the rule off for test files with `per-file-ignores`.

    ## Verify
    Measured on an H200 (torch 2.11): `torch.equal`, `torch.allclose`, `x.equal(y)`,
    `x.allclose(y)`, `x.sum().is_nonzero()` and `torch.testing.assert_close(x, y)` take the whole
    queued `torch.cuda._sleep`;
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
            a, b = arg(node, 0, "input"), arg(node, 1, "other")
            if q.endswith(".equal") and a is not None and b is not None and same_operand(a.value, b.value):
                return  # `torch.equal(a, a)`: the same tensor is equal without a look at the data
            if self._gpu_operands(a, b):
                self.report(node)
        elif q in ASSERTIONS:
            if self._gpu_operands(arg(node, 0, "actual"), arg(node, 1, "expected")):
                self.report(node, ASSERT_MESSAGE)
        elif q is None and self.ctx.tensor_method(node) in NAMES and self.ctx.maybe_gpu_tensor(node.func.value):
            other = arg(node, 0, "other")
            if node.func.attr.value == "equal" and other is not None and same_operand(node.func.value, other.value):
                return
            self.report(node)

    def _gpu_operands(self, *operands) -> bool:
        return any(a is not None and may_be_on_gpu(self.ctx.value(a.value)) for a in operands)
