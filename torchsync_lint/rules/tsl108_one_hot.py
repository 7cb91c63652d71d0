"""TSL108 one-hot-without-num-classes."""

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules import _fixes as fx
from torchsync_lint.rules._common import arg, may_be_on_gpu, number_literal

FUNCTIONS = frozenset(("torch.nn.functional.one_hot", "torch._C._nn.one_hot"))

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.nn.functional.one_hot": "num_classes=4",
}


class OneHotWithoutNumClasses(Rule):
    """
    ## What it does
    Flags `F.one_hot(t)` (`torch.nn.functional.one_hot`) on a tensor that may be on the GPU
    without `num_classes`, or with `num_classes=-1` (the default). A positional second argument
    counts.

    ## Why is this bad?
    Without `num_classes` the width of the result is `t.max() + 1`, which only the GPU knows:
    PyTorch copies the maximum to the host to allocate the output, so the CPU waits for every
    queued kernel.

    ## Example
    ```python
    import torch.nn as nn
    import torch.nn.functional as F


    class Targets(nn.Module):
        def forward(self, labels):
            return F.one_hot(labels).float()
    ```

    ## Use instead
    ```python
    import torch.nn as nn
    import torch.nn.functional as F


    class Targets(nn.Module):
        def forward(self, labels):
            return F.one_hot(labels, num_classes=10).float()
    ```

    ## Fix safety
    Safe when the number of classes is the one the model was built for (the usual case); a label
    at or above it then fails with a device-side assertion instead of widening the result.

    Autofix (safe, `--fix`): only where the code states the count, `F.one_hot(t % 10)` becomes
    `F.one_hot(t % 10, num_classes=10)`; elsewhere the count is the user's to give.

    ## Known problems
    `num_classes` given as a variable is assumed not to be -1. An untyped first argument is
    reported (the function only takes tensors); one known to be on the CPU is not.

    ## Verify
    Measured on an H200 (torch 2.11): `F.one_hot(t)` and `F.one_hot(t, -1)` take the whole
    queued `torch.cuda._sleep`; `F.one_hot(t, 10)` and `F.one_hot(t, num_classes=10)` return in
    well under a millisecond.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.functional.one_hot.html
    - DESIGN.md section 4
    """

    code = "TSL108"
    name = "one-hot-without-num-classes"
    message = (
        "`one_hot` without `num_classes` reads `t.max()` on the host to size its output; "
        "pass `num_classes=` explicitly"
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) not in FUNCTIONS:
            return
        labels = arg(node, 0, "tensor")
        if labels is None or not may_be_on_gpu(self.ctx.value(labels.value)):
            return
        classes = arg(node, 1, "num_classes")
        if classes is None or number_literal(classes.value) == -1:
            self.report(node, fix=self._fix(node, labels.value, classes))

    def _fix(self, call: cst.Call, labels: cst.BaseExpression, classes):
        """`one_hot(t % 10)` -> `one_hot(t % 10, num_classes=10)`: only a count the code states."""
        count = _stated_count(labels)
        if count is None or fx.has_star(call):
            return None
        if classes is not None and classes.keyword is None:  # one_hot(t, -1)
            args = [call.args[0], classes.with_changes(value=cst.Integer(str(count)))] + list(call.args[2:])
            new = call.with_changes(args=args)
        else:
            new = fx.with_keyword(call, "num_classes", str(count))
        return fx.make(fx.SAFE, f"pass `num_classes={count}`", call, new)


def _stated_count(labels: cst.BaseExpression):
    """The number of classes when the labels are `t % K` with a literal `K`, else None."""
    if type(labels) is cst.BinaryOperation and type(labels.operator) is cst.Modulo:
        k = number_literal(labels.right)
        if k is not None and k == int(k) and k > 0 and type(labels.right) is cst.Integer:
            return int(k)
    return None
