"""TSL004 python-scalar-conversion."""

from typing import Set

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import collect_ids, gpu_tensor_by_evidence, is_thunk

# Builtins and functions that turn their argument into a Python number or bool.
CONVERTERS = frozenset(
    ("builtins.float", "builtins.int", "builtins.bool", "builtins.complex", "operator.index", "operator.truth")
)
# math.prod multiplies its elements with `*`: on tensors it stays a tensor.
MATH_KEEPS_TENSORS = frozenset(("math.prod",))
DUNDERS = frozenset(("__float__", "__int__", "__bool__", "__index__", "__complex__"))


class PythonScalarConversion(Rule):
    """
    ## What it does
    Flags conversions of a GPU (or unknown-device) tensor to a Python number: `float(t)`,
    `int(t)`, `bool(t)`, `complex(t)`, `operator.index(t)`, `math.<function>(t)`
    (`math.isnan(loss)`, `math.sqrt(var)`, `math.floor(n)`) and the dunders `t.__float__()` etc.

    ## Why is this bad?
    A Python number lives on the host. Converting a tensor reads its value, like `.item()`: the
    host waits until every queued kernel that produces it has finished, and the GPU runs dry while
    the CPU catches up. `math` functions convert their arguments with `float()` first, so
    `math.isnan(loss)` is a hidden sync.

    ## Example
    ```python
    import torch.nn as nn


    class Loss(nn.Module):
        def forward(self, pred, target):
            scale = float(target.abs().max())
            return (pred - target).pow(2).mean() / scale
    ```

    ## Use instead
    ```python
    import torch.nn as nn


    class Loss(nn.Module):
        def forward(self, pred, target):
            scale = target.abs().max()  # a 0-dim tensor broadcasts like a number
            return (pred - target).pow(2).mean() / scale
    ```

    ## Fix safety
    Unsafe: the value stays a tensor. Arithmetic broadcasts a 0-dim tensor like a number, and
    `t.float()`, `t.long()`, `t.bool()` change the dtype without leaving the GPU; `torch.isnan`,
    `torch.sqrt`, `torch.floor` replace the `math` functions. Code that truly needs a Python value
    (a size, a branch) must read it outside the step.

    ## Known problems
    Reported only when inference says the argument is a tensor; a tensor known to be made on the
    CPU is not reported. `int(t.item())` is one finding, TSL001. `math.prod` is not reported: it
    multiplies tensors without converting them. Unannotated `forward` inputs after the first are
    tensors by convention only (ints and flags are passed too) and are not reported here; annotate
    them (`mask: Tensor`) to have them checked.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: a sync waits
    for the sleep; `set_sync_debug_mode("warn")` reports the device-to-host `cudaMemcpyAsync` of
    `aten::_local_scalar_dense`.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.Tensor.item.html
    - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
    """

    code = "TSL004"
    name = "python-scalar-conversion"
    message = (
        "converting a tensor to a Python number waits for the GPU; keep it a tensor "
        "(`t.float()`, `t.long()`, torch ops instead of `math`) and read it outside the step"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._deferred: Set[int] = set()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        if is_thunk(node):  # `lambda: f"{int(n)} tokens"`: a message built only on failure
            collect_ids(node.body, self._deferred)

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self._deferred:
            return
        f = node.func
        if type(f) is cst.Attribute and f.attr.value in DUNDERS and not node.args:
            if self.ctx.qualname(f) is None and self._tensor(f.value):
                self.report(node)
            return
        q = self.ctx.qualname(f)
        if q is None:
            return
        if q in CONVERTERS:
            positional = [a for a in node.args if a.keyword is None and not a.star]
            if len(positional) == 1 and self._tensor(positional[0].value):
                self.report(node)
        elif q.startswith("math.") and q not in MATH_KEEPS_TENSORS:
            if any(a.keyword is None and self._tensor(a.value) for a in node.args):
                self.report(node)

    def _tensor(self, expr: cst.BaseExpression) -> bool:
        # `int(n)` of an unannotated forward input `n` is rather evidence that `n` is an int
        return gpu_tensor_by_evidence(self.ctx.value(expr))
