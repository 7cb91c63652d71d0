"""TSL413 lbfgs-step."""

import libcst as cst

from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference.values import OBJECT, Value
from torchsync_lint.rules.base import Rule

# The optimizer steps this rule reports (read by rules.claims; truth row optim-07).
LBFGS_CALLS = frozenset(q + ".step" for q in api.HOST_CHECKING_OPTIMIZERS)


def _may_be_lbfgs(v: Value) -> bool:
    """An LBFGS optimizer, or an instance of one of several classes one of which is
    (`optimizers.get(name)` returning LBFGS for one name, Adam for another)."""
    return v.kind == OBJECT and any(m.cls in api.HOST_CHECKING_OPTIMIZERS
                                    for m in ((v,) if v.cls is not None else v.elts))


class LbfgsStep(Rule):
    """
    ## What it does
    Flags `opt.step(closure)` where `opt` is a `torch.optim.LBFGS` (made here, held in an
    attribute, or returned by a helper that makes one of several optimizers).

    ## Why is this bad?
    Each `LBFGS.step` reads the closure's loss with `float(...)`, tests the gradient's largest
    entry against `tolerance_grad` and, per inner iteration, the change of the loss and of the
    parameters, all on the host: every step waits for the GPU at least once, and up to `max_iter`
    times (measured on an H200: the step waited for a queued `torch.cuda._sleep`, truth row
    optim-07). L-BFGS is a full-batch optimizer whose steps are few and long, so the waits are
    often acceptable; in a loop over many small batches they are not.

    ## Example
    ```python
    import torch


    def refine(model, x, y, steps=100):
        opt = torch.optim.LBFGS(model.parameters(), max_iter=20)

        def closure():
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss

        for _ in range(steps):
            opt.step(closure)
    ```

    ## Use instead
    ```python
    import torch


    def refine(model, x, y, steps=100):
        # a first-order optimizer reads nothing on the host: its steps queue on the GPU
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for _ in range(steps):
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    ```

    Where L-BFGS is wanted, fewer and longer calls (one `opt.step(closure)` with a larger
    `max_iter`) wait fewer times.

    ## Fix safety
    Unsafe: no rewrite keeps the optimizer's numerics; the waits are part of the algorithm. Fewer
    calls with a larger `max_iter`, or a first-order optimizer for mini-batches, is a design choice.

    ## Known problems
    Only optimizers inference can see being made with `torch.optim.LBFGS(...)` are recognised (a
    subclass of it, or one made by a factory in another package, is not). An optimizer that may be
    one of several (a helper returning LBFGS or Adam by name) is reported at its `step(closure)`
    call: the closure argument is what LBFGS needs, and `step()` without one is not reported.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: the step
    waits for the sleep; `set_sync_debug_mode("warn")` reports the reads of the loss.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.optim.LBFGS.html
    - tests/truth/sync_truth.json, optim-07
    """

    code = "TSL413"
    name = "lbfgs-step"
    message = (
        "`LBFGS.step` reads the loss and the gradient's size on the host (several times per step); "
        "take fewer, longer steps (a larger `max_iter`), or a first-order optimizer for mini-batches"
    )

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if not (type(f) is cst.Attribute and f.attr.value == "step" and node.args):
            return
        if _may_be_lbfgs(self.ctx.value(f.value)):
            self.report(node)
