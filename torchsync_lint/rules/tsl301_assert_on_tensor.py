"""TSL301 assert-on-tensor."""

from typing import Iterator

import libcst as cst

from torchsync_lint.rule import Rule
from torchsync_lint.rules._common import arg


class AssertOnTensor(Rule):
    """
    ## What it does
    Flags `assert <test>` where the test (or an operand of its `not` / `and` / `or`) is a tensor
    that may live on the GPU: `assert target.max() < 10`, `assert (x >= 0).all()`,
    `assert torch.isfinite(loss)`, `assert not torch.isnan(x).any()`; also
    `torch._assert(cond, msg)`, which does the same `bool()`.

    ## Why is this bad?
    `assert` calls `bool()` on its test. For a GPU tensor that copies the value to the host,
    and the CPU waits for every queued kernel, in every step, to check something that is
    almost always true. (Run with `python -O` and the check and its wait vanish, which also
    means the check protects nothing there.)

    ## Example
    ```python
    import torch.nn as nn


    class Loss(nn.Module):
        def forward(self, pred, target):
            assert target.max() < pred.shape[1]
            return nn.functional.cross_entropy(pred, target)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class Loss(nn.Module):
        def forward(self, pred, target):
            torch._assert_async(target.max() < pred.shape[1])
            return nn.functional.cross_entropy(pred, target)
    ```

    ## Fix safety
    Unsafe: `torch._assert_async(cond)` checks on the GPU without waiting, but a failure
    surfaces later, as a device-side assertion that ends the CUDA context, not as a Python
    `AssertionError` at this line. Alternatives: check once outside the training step, or only
    under a debug flag.

    ## Known problems
    Only the test is inspected; a message that formats a tensor (`assert c, f"{t}"`) runs only
    when the check fails. An assert on a value inference cannot type is not reported, nor one on
    a tensor known to be on the CPU. `assert t.item() > 0` is TSL001 (one sync, one finding).

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: the host
    waits for the sleep; `set_sync_debug_mode("warn")` reports the device-to-host copy.

    ## References
    - https://docs.python.org/3/reference/simple_stmts.html#the-assert-statement
    - seeds/000 (weighted NLL loss), DESIGN.md section 4
    """

    code = "TSL301"
    name = "assert-on-tensor"
    message = (
        "`assert` on a tensor converts it to a Python bool, which waits for the GPU; "
        "use `torch._assert_async(cond)`, or check outside the step or under a debug flag"
    )

    def visit_Assert(self, node: cst.Assert) -> None:
        if any(self.ctx.maybe_gpu_tensor(e) for e in _truth_operands(node.test)):
            self.report(node)

    def visit_Call(self, node: cst.Call) -> None:
        # torch._assert(cond, msg): the traceable spelling of `assert`, with the same bool() (measured)
        if self.ctx.qualname(node.func) == "torch._assert":
            cond = arg(node, 0, "condition")
            if cond is not None and any(self.ctx.maybe_gpu_tensor(e) for e in _truth_operands(cond.value)):
                self.report(node)


def _truth_operands(e: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The expressions whose truth value the test takes (through `not`, `and`, `or`)."""
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Not):
        yield from _truth_operands(e.expression)
    elif isinstance(e, cst.BooleanOperation):
        yield from _truth_operands(e.left)
        yield from _truth_operands(e.right)
    else:
        yield e
