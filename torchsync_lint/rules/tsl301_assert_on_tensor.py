"""TSL301 assert-on-tensor."""

from typing import Iterator

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules import _fixes as fx
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

    Autofix (unsafe, `--unsafe-fixes`): `assert cond, "msg"` and `torch._assert(cond, "msg")`
    become `torch._assert_async(cond, "msg")`; `assert not t` becomes
    `torch._assert_async(torch.logical_not(t))`. A test that is not surely a tensor (not a tensor
    method's or public torch function's result, nor compared with one) is wrapped in
    `torch.as_tensor(...)`, so a Python bool still works. Tests joined with `and`/`or` and
    formatted messages are left alone.

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
            self.report(node, fix=self._fix(node, node.test, node.msg))

    def visit_Call(self, node: cst.Call) -> None:
        # torch._assert(cond, msg): the traceable spelling of `assert`, with the same bool() (measured)
        if self.ctx.qualname(node.func) == "torch._assert":
            cond = arg(node, 0, "condition")
            if cond is not None and any(self.ctx.maybe_gpu_tensor(e) for e in _truth_operands(cond.value)):
                message = arg(node, 1, "message")
                plain = len(node.args) <= 2 and not any(a.star or a.keyword for a in node.args)
                self.report(node, fix=self._fix(node, cond.value, message.value if message else None) if plain else None)

    def _fix(self, node: cst.CSTNode, test: cst.BaseExpression, msg):
        """`assert cond, "msg"` -> `torch._assert_async(cond, "msg")`: one tensor test (or `not`
        of one), and a message that is a plain string (a formatted one would run every time)."""
        if msg is not None and type(msg) not in (cst.SimpleString, cst.ConcatenatedString):
            return None
        torch, imports = fx.torch_name(self.ctx)
        negated = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
        operand = test.expression if negated else test
        if not self.ctx.maybe_gpu_tensor(operand):
            return None  # `a and b`, a Python bool: no single tensor to assert on
        cond = fx.code_keeping_comments(operand)
        if not self._surely_tensor(operand):
            cond = f"{torch}.as_tensor({cond})"  # a bool after all would make _assert_async raise
        if negated:
            cond = f"{torch}.logical_not({cond})"
        args = cond if msg is None else f"{cond}, {fx.code(msg)}"
        return fx.make(fx.UNSAFE, "check on the device with `torch._assert_async`", node,
                       f"{torch}._assert_async({args})", imports)

    def _surely_tensor(self, e: cst.BaseExpression) -> bool:
        """A tensor method's or public torch function's result, or a comparison with one."""
        if type(e) is cst.Comparison:
            return any(self._surely_tensor(x) for x in [e.left] + [c.comparator for c in e.comparisons])
        if type(e) is cst.Call:
            if self.ctx.tensor_method(e) is not None:
                return True
            q = self.ctx.qualname(e.func)
            return q is not None and q.startswith("torch.") and not any(p.startswith("_") for p in q.split(".")[1:])
        return False


def _truth_operands(e: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The expressions whose truth value the test takes (through `not`, `and`, `or`)."""
    if type(e) is cst.UnaryOperation and type(e.operator) is cst.Not:
        yield from _truth_operands(e.expression)
    elif type(e) is cst.BooleanOperation:
        yield from _truth_operands(e.left)
        yield from _truth_operands(e.right)
    else:
        yield e
