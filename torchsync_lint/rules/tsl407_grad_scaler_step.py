"""TSL407 grad-scaler-step."""

import libcst as cst

from torchsync_lint import catalog
from torchsync_lint.inference.values import CPU, GRAD_SCALER
from torchsync_lint.rules.base import Rule

# GradScaler methods this rule reports on a CUDA scaler (read by rules.claims). `step` reads
# found_inf (tests/truth optim-01), `state_dict` the scale and growth tracker with `.item()` once
# `scale()` has made them (scaler-01); others are reported once the catalog measures them to sync.
SCALER_CALLS = frozenset(("torch.amp.GradScaler.step", "torch.amp.GradScaler.state_dict"))
_TRUTH_MEASURED = frozenset(("step", "state_dict"))
MEASURED_MESSAGE = "`GradScaler.{method}` was measured to make the host wait for the GPU; call it outside the step"


def _reported(method: str) -> bool:
    q = f"torch.amp.GradScaler.{method}"
    return q in SCALER_CALLS and (method in _TRUTH_MEASURED or catalog.syncs(q) is True)


class GradScalerStep(Rule):
    """
    ## What it does
    Flags `scaler.step(optimizer)` where `scaler` is a CUDA `GradScaler`
    (`torch.amp.GradScaler("cuda")`, `torch.cuda.amp.GradScaler()`), in hot code.

    ## Why is this bad?
    Before it steps, `GradScaler.step` reads whether any gradient was inf or NaN
    (`found_inf.item()`) to decide whether to skip the step: the host waits for the whole
    backward pass to finish before it can launch the optimizer kernels, every step.

    ## Example
    ```python
    import torch


    def train(model, loader, opt):
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    ```

    ## Use instead
    ```python
    import torch


    def train(model, loader, opt):
        for x, y in loader:
            # bfloat16 has float32's range: no loss scaling, no inf check, no sync
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x, y)
            loss.backward()
            opt.step()
    ```

    ## Fix safety
    Unsafe: switching to bfloat16 changes numerics; it needs hardware with bf16 support (Ampere
    or newer). With float16, the sync is the price of dynamic loss scaling.

    ## Known problems
    Only scalers inference can see being created (in the function, or as a `self.` attribute)
    are recognised. CPU scalers (`GradScaler("cpu")`) are not reported, nor are scalers
    enabled by a condition (`GradScaler(enabled=use_amp)`): AMP as an option is off unless asked
    for, and a disabled scaler's `step` is the optimizer's (flair's and speechbrain's trainers
    measured so under their default settings); `enabled=True` is reported. `state_dict()` reads
    the scale with `.item()` once `scale()` has run (a checkpoint in the loop); before the first
    step it returns the initial scale without a wait, which is not told apart.

    ## Verify
    Measured on an H200 (torch 2.11): `scaler.step(opt)` waited for a queued 50 ms
    `torch.cuda._sleep`; `Adam.step()` alone did not (tests/truth/sync_truth.json, optim-01);
    `scaler.state_dict()` after `scaler.scale(loss)` waited too (scaler-01).

    ## References
    - https://pytorch.org/docs/stable/amp.html#gradient-scaling
    - DESIGN.md section 4
    """

    code = "TSL407"
    name = "grad-scaler-step"
    message = (
        "`GradScaler.step` reads the inf/NaN check on the host every step; with bfloat16 autocast "
        "no scaler (and no sync) is needed"
    )
    hot_only = True

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if type(f) is cst.Attribute and _reported(f.attr.value):
            v = self.ctx.value(f.value)
            if v.kind == GRAD_SCALER and v.device != CPU and not v.maybe:  # maybe: enabled by a condition
                self.report(node, None if f.attr.value == "step" else MEASURED_MESSAGE.format(method=f.attr.value))
