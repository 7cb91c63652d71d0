"""TSL302 tensor-truthiness."""

from typing import Set

import libcst as cst

from torchsync_lint.inference.values import NUMBER, TENSOR
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import collect_ids, gpu_tensor_by_evidence, holds_gpu_tensor

# Comparisons whose result is a Python bool whatever the operands (identity).
IDENTITY = (cst.Is, cst.IsNot)
MEMBERSHIP = (cst.In, cst.NotIn)
COMPREHENSIONS = (cst.GeneratorExp, cst.ListComp, cst.SetComp)


class TensorTruthiness(Rule):
    """
    ## What it does
    Flags a GPU (or unknown-device) tensor where Python needs a `bool`: `if t:`,
    `if (x > 0).any():`, `elif`, `while`, `a if t else b`, `t and x`, `t or x`, `not t`,
    comprehension filters, chained comparisons (`0 < t < 1`), `v in t`, and the builtins
    `any(t)` / `all(t)`. `assert` is left to TSL301.

    ## Why is this bad?
    Python branches on `bool(t)`, which reads the tensor's value on the host: the host waits for
    every kernel queued before it, and the GPU runs dry while the CPU decides. A data-dependent
    `if` in `forward` also breaks CUDA graphs and `torch.compile` graphs. `any(t)` iterates the
    tensor and syncs once per element; `v in t` calls `.item()`.

    ## Example
    ```python
    import torch.nn as nn


    class Loss(nn.Module):
        def forward(self, pred, target):
            loss = (pred - target).abs()
            if (loss > 10).any():
                loss = loss.clamp(max=10)
            return loss.mean()
    ```

    ## Use instead
    ```python
    import torch.nn as nn


    class Loss(nn.Module):
        def forward(self, pred, target):
            loss = (pred - target).abs()
            loss = loss.clamp(max=10)  # a no-op where nothing is above 10: no branch needed
            return loss.mean()
    ```

    ## Fix safety
    Unsafe: the branch becomes data flow. Compute both sides and select with
    `torch.where(cond, a, b)`, use masked ops (`masked_fill`, multiplication by a mask), or clamp;
    a decision that really must be taken on the host (early stopping, skipping a bad batch) moves
    out of the step, checked every N steps.

    ## Known problems
    Reported only when inference says the tested value is a tensor not known to be on the CPU:
    `if x is None`, `if x.shape[0] > 0`, `if len(x)`, `if self.training` and tests on Python
    numbers are not. Unannotated `forward` inputs after the first are tensors by convention only
    (`forward(self, x, use_cache)`: flags are passed too), so `if use_cache:` is not reported;
    annotate a tensor input (`mask: Tensor`) to have it checked. `isinstance` checks do not
    narrow a value (`if not isinstance(t, Tensor): ...` still sees a tensor). `if x.item() > 0` is
    one finding, TSL001; `bool(t)` is TSL004.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: a sync waits
    for the sleep; `set_sync_debug_mode("warn")` reports the `cudaMemcpyAsync` of
    `aten::is_nonzero` / `aten::_local_scalar_dense`.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.where.html
    - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
    """

    code = "TSL302"
    name = "tensor-truthiness"
    message = (
        "branching on a tensor calls bool() and waits for the GPU; select with `torch.where` or "
        "masked ops, or take the decision outside the step"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._asserted: Set[int] = set()  # nodes inside assert statements: TSL301 owns them

    def visit_Assert(self, node: cst.Assert) -> None:
        collect_ids(node.test, self._asserted)
        if node.msg is not None:
            collect_ids(node.msg, self._asserted)

    # -- boolean contexts ----------------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self._truth_tested(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._truth_tested(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._truth_tested(node.test)

    def visit_CompIf(self, node: cst.CompIf) -> None:
        self._truth_tested(node.test)

    def visit_MatchCase(self, node: cst.MatchCase) -> None:
        if node.guard is not None:  # `case _ if t:`
            self._truth_tested(node.guard)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if type(node.operator) is cst.Not:
            self._truth_tested(node.expression)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        # `a and b` / `a or b` always tests `a`; `b` is tested only when the whole is (handled there)
        self._truth_tested(node.left)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if id(node) in self._asserted:
            return
        left = node.left
        for i, comp in enumerate(node.comparisons):
            op, right = comp.operator, comp.comparator
            if isinstance(op, MEMBERSHIP):
                # Tensor.__contains__ calls .item(); it only takes a tensor or a number
                tested = self._tensor(right) and self.ctx.value(left).kind in (TENSOR, NUMBER)
            else:
                chained = i < len(node.comparisons) - 1  # `a < t < b` is `(a < t) and (t < b)`
                tested = chained and not isinstance(op, IDENTITY) and (
                    self._tensor(left) or self._tensor(right)
                )
            if tested:
                self.report(node)
                return
            left = right

    def leave_Call(self, node: cst.Call) -> None:
        # leave_: a comprehension's loop variable is bound once its node has been visited
        if id(node) in self._asserted or self.ctx.qualname(node.func) not in ("builtins.any", "builtins.all"):
            return
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return
        it = node.args[0].value
        if isinstance(it, COMPREHENSIONS):
            tested = self._tensor(it.elt)
        else:
            tested = holds_gpu_tensor(self.ctx.value(it), evidence=True)
        if tested:
            self.report(node)

    def _truth_tested(self, expr: cst.BaseExpression) -> None:
        if id(expr) in self._asserted:
            return
        if type(expr) is cst.BooleanOperation:
            self._truth_tested(expr.left)
            self._truth_tested(expr.right)
        elif type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Not:
            return  # visit_UnaryOperation reports the operand
        elif self._tensor(expr):
            self.report(expr)

    def _tensor(self, expr: cst.BaseExpression) -> bool:
        # `if flag:` on an unannotated forward input is no evidence of a tensor: flags come in too
        return gpu_tensor_by_evidence(self.ctx.value(expr))
