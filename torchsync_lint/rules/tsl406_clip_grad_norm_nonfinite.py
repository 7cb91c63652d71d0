"""TSL406 clip-grad-norm-nonfinite-check."""

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, is_true

# Position of `error_if_nonfinite` among the positional parameters.
FLAG_POSITION = {
    "clip_grad_norm_": 3,  # (parameters, max_norm, norm_type, error_if_nonfinite, foreach)
    "clip_grad_norm": 3,  # deprecated alias
    "get_total_norm": 2,  # (tensors, norm_type, error_if_nonfinite, foreach)
}
PREFIXES = ("torch.nn.utils.", "torch.nn.utils.clip_grad.")


# The calls this rule reports (read by rules.claims).
FUNCTIONS = frozenset(p + n for p in PREFIXES for n in FLAG_POSITION)
SYNC_CONDITION = "only with `error_if_nonfinite=True`"

class ClipGradNormNonfiniteCheck(Rule):
    """
    ## What it does
    Flags `torch.nn.utils.clip_grad_norm_(..., error_if_nonfinite=True)` (also the deprecated
    `clip_grad_norm` and `torch.nn.utils.get_total_norm`), however imported; a positional
    `True` in the flag's place counts. The default (`error_if_nonfinite=False`) is sync-free and
    not reported.

    ## Why is this bad?
    To raise on a NaN or infinite total norm, PyTorch checks `total_norm.isnan() or
    total_norm.isinf()` on the host: the CPU waits for the backward pass and the norm to finish
    before it can queue the optimizer step, every step.

    ## Example
    ```python
    import torch


    def train(model, loader, opt):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
            opt.step()
            opt.zero_grad()
    ```

    ## Use instead
    ```python
    import torch


    def train(model, loader, opt):
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            torch._assert_async(torch.isfinite(norm))  # fails a later sync instead of waiting now
            opt.step()
            opt.zero_grad()
    ```

    ## Fix safety
    Unsafe: a non-finite norm no longer raises at this line; the gradients are scaled by NaN.
    Keep the returned norm and check `torch.isfinite(norm)` asynchronously
    (`torch._assert_async`, or accumulate it and read it every N steps); `GradScaler` skips such
    steps on its own under mixed precision.

    ## Known problems
    `error_if_nonfinite=<variable>` is assumed to be False. `clip_grad_norm_` methods of wrappers
    (FSDP, DeepSpeed, Accelerate) are not reported.

    ## Verify
    Measured on an H200 (torch 2.11): `clip_grad_norm_(p, 1.0, error_if_nonfinite=True)`, its
    positional form and `get_total_norm(g, error_if_nonfinite=True)` take the whole queued
    `torch.cuda._sleep`; the default `clip_grad_norm_`, `foreach=False` and `clip_grad_value_`
    return in well under a millisecond. `set_sync_debug_mode("warn")` reports the copy.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_norm_.html
    - DESIGN.md section 4
    """

    code = "TSL406"
    name = "clip-grad-norm-nonfinite-check"
    message = (
        "`error_if_nonfinite=True` reads the total norm on the host every step; drop it and check "
        "`torch.isfinite(total_norm)` asynchronously (`torch._assert_async`)"
    )

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q is None or not q.startswith(PREFIXES):
            return
        position = FLAG_POSITION.get(q.split(".")[-1])
        if position is None or q.rsplit(".", 1)[0] + "." not in PREFIXES:
            return
        flag = arg(node, position, "error_if_nonfinite")
        if flag is not None and is_true(flag.value):
            self.report(node)
