"""TSL105 repeat-interleave-without-output-size."""

from typing import Optional

import libcst as cst

from torchsync_lint.inference.values import NONE
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules import _fixes as fx
from torchsync_lint.rules._common import arg, gpu_tensor_by_evidence, may_be_on_gpu

# The calls it reports (with tensor `repeats`: the catalog's `repeats=tensor` variants).
CALLS = frozenset(("torch.repeat_interleave", "torch.Tensor.repeat_interleave"))
SYNC_CONDITION = "only with tensor `repeats` and no `output_size`"

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.repeat_interleave": "output_size=from_result",
}


class RepeatInterleaveWithoutOutputSize(Rule):
    """
    ## What it does
    Flags `torch.repeat_interleave(x, repeats)`, `x.repeat_interleave(repeats)` and the
    one-argument `torch.repeat_interleave(counts)` when `repeats` is a tensor that may be on the
    GPU and no `output_size=` is given.

    ## Why is this bad?
    The output has `repeats.sum()` elements. Without `output_size=`, PyTorch computes that sum on
    the device and copies it to the host to allocate the result: the CPU waits for every queued
    kernel. With a Python integer `repeats` the size is known on the host and nothing waits.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class LengthRegulator(nn.Module):
        def forward(self, frames, durations: torch.Tensor):
            return frames.repeat_interleave(durations, dim=0)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class LengthRegulator(nn.Module):
        def forward(self, frames, durations: torch.Tensor, total: int):
            # total = durations.sum(), computed by the data loader on the CPU
            return frames.repeat_interleave(durations, dim=0, output_size=total)
    ```

    ## Fix safety
    Unsafe: `output_size` must equal `repeats.sum()` exactly; a wrong value raises or returns
    wrong data. Pass it only where the host knows the total already (computed with the batch on
    the CPU, or a fixed number of repeats per element).

    Autofix (safe, `--fix`): where `repeats` is a `torch.tensor([...])` of two or more integers
    written in the code, `output_size=` their sum is added (the only total the linter knows).

    ## Known problems
    In the two-argument forms `repeats` must be inferred to be a tensor from evidence (made by a
    torch op, annotated `Tensor`, or used with tensor methods): a variable inference cannot type,
    or an unannotated `forward` input, is taken for a Python integer (the common
    `k.repeat_interleave(n_rep, dim=1)` of attention code) and not reported. The one-argument
    form only takes a tensor and is reported unless that tensor is known to be on the CPU.
    `output_size=None` counts as absent.

    ## Verify
    Measured on an H200 (torch 2.11): tensor `repeats` without `output_size` (method, function
    and one-argument forms, a one-element tensor too) take the whole queued
    `torch.cuda._sleep`; with `output_size=` or an integer `repeats` they return in well under a
    millisecond. `set_sync_debug_mode("warn")` reports the copy of the sum.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.repeat_interleave.html
    - DESIGN.md section 4
    """

    code = "TSL105"
    name = "repeat-interleave-without-output-size"
    message = (
        "`repeat_interleave` with tensor `repeats` copies `repeats.sum()` to the host to size the output; "
        "pass `output_size=` (the total, known on the host) or use integer repeats"
    )

    def report(self, node, message=None, fix=None) -> None:
        super().report(node, message, fix=fix or self._fix(node))

    def _fix(self, call: cst.Call):
        """`output_size=` when `repeats` is a literal `torch.tensor([...])` of two or more ints
        (one element would repeat every row: the total depends on the input's size)."""
        if fx.has_star(call):
            return None
        if self.ctx.qualname(call.func) == "torch.repeat_interleave":
            repeats = arg(call, 1, "repeats") or arg(call, 0, "input")
        else:
            repeats = arg(call, 0, "repeats")
        counts = _literal_counts(self.ctx, repeats.value) if repeats is not None else None
        if counts is None or len(counts) < 2:
            return None
        return fx.make(fx.SAFE, f"pass `output_size={sum(counts)}`", call,
                       fx.with_keyword(call, "output_size", str(sum(counts))))

    def visit_Call(self, node: cst.Call) -> None:
        if self._has_output_size(node):
            return
        if self.ctx.qualname(node.func) == "torch.repeat_interleave":
            repeats = arg(node, 1, "repeats")
            data = arg(node, 0, "input")
            if repeats is None and data is not None and data.keyword is None:
                # torch.repeat_interleave(counts): the only argument, always a tensor
                if may_be_on_gpu(self.ctx.value(data.value)):
                    self.report(node)
            elif repeats is not None and self._gpu_repeats(repeats.value, data.value if data else None):
                self.report(node)
        elif self.ctx.tensor_method(node) == "repeat_interleave":
            repeats = arg(node, 0, "repeats")
            if repeats is not None and self._gpu_repeats(repeats.value, node.func.value):
                self.report(node)

    def _gpu_repeats(self, repeats: cst.BaseExpression, data: Optional[cst.BaseExpression]) -> bool:
        # An int is the usual `repeats`: an unannotated forward input is no evidence of a tensor.
        if not gpu_tensor_by_evidence(self.ctx.value(repeats)):
            return False
        return data is None or may_be_on_gpu(self.ctx.value(data))

    def _has_output_size(self, call: cst.Call) -> bool:
        size = arg(call, None, "output_size")
        return size is not None and self.ctx.value(size.value).kind != NONE


def _literal_counts(ctx, expr):
    """The integers of `torch.tensor([1, 2, 3], ...)` written in the code, else None."""
    if not (type(expr) is cst.Call and ctx.qualname(expr.func) in ("torch.tensor", "torch.as_tensor") and expr.args):
        return None
    data = expr.args[0].value
    if expr.args[0].keyword is not None or type(data) not in (cst.List, cst.Tuple):
        return None
    out = []
    for el in data.elements:
        if type(el.value) is not cst.Integer:
            return None
        out.append(int(el.value.evaluated_value))
    return out
