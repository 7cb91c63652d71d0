"""TSL408 save-cuda-state."""

import libcst as cst

from torchsync_lint.inference.values import CPU, DICT, LIST, TENSOR, TUPLE, Value
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg

SAVES = frozenset(("torch.save",))
# Methods of modules, optimizers, schedulers and scalers that return their tensors (on their device).
STATE_METHODS = frozenset(("state_dict", "named_parameters", "parameters", "buffers", "named_buffers"))


class SaveCudaState(Rule):
    """
    ## What it does
    Flags `torch.save` of GPU state in hot code (a training loop, or a function it calls every
    step): a tensor that may live on the GPU, `model.state_dict()` / `optimizer.state_dict()`,
    or a dict, list or tuple holding either.

    ## Why is this bad?
    `torch.save` copies every CUDA storage to the host before writing it, and each blocking
    copy waits for all queued kernels: the GPU drains, then idles while the file is written
    (measured on an H100: `torch.save(self.lin.state_dict(), buf)` stalls for the whole queued
    kernel). Under `if step % N == 0` it is a periodic stall (labelled `periodic`); every step it
    dominates the step time.

    ## Example
    ```python
    import torch


    def train(model, loader, opt):
        for step, (x, y) in enumerate(loader):
            loss = model(x, y)
            loss.backward()
            opt.step()
            torch.save(model.state_dict(), "last.pt")
    ```

    ## Use instead
    ```python
    import torch


    def train(model, loader, opt, every=1000):
        for step, (x, y) in enumerate(loader):
            loss = model(x, y)
            loss.backward()
            opt.step()
            if step % every == 0:  # a periodic checkpoint: one stall per `every` steps
                torch.save(model.state_dict(), "last.pt")
    ```

    ## Fix safety
    Not automatic: how often to checkpoint is the user's choice. To take the stall off the
    training stream, copy the state into pinned host buffers with `non_blocking=True`, record
    an event, and write the file from another thread after `event.synchronize()`.

    ## Known problems
    Reported in hot code only (a save at the end of `main` costs nothing per step). What a
    call returns is followed by inference: a helper that builds the checkpoint dict in another
    file is followed when the project is linted together. A CPU tensor or a `state_dict()` of a
    module kept on the CPU is not known to be on the CPU and is reported.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`; truth
    table row save-01.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.save.html
    - https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html
    """

    code = "TSL408"
    name = "save-cuda-state"
    message = (
        "`torch.save` copies every GPU tensor to the host and waits for the GPU; checkpoint less often "
        "(`if step % N == 0`), or copy into pinned buffers with `non_blocking=True` and save from another thread"
    )
    hot_only = True

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) not in SAVES:
            return
        obj = arg(node, 0, "obj")
        if obj is not None and self._holds_gpu_state(obj.value, 0):
            self.report(node)

    def _holds_gpu_state(self, expr: cst.BaseExpression, depth: int) -> bool:
        if depth > 4:
            return False
        if type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in STATE_METHODS:
            return self.ctx.value(expr.func.value).kind not in (DICT, LIST, TUPLE)  # a module's, an optimizer's
        if type(expr) is cst.Dict:
            return any(type(el) is cst.DictElement and self._holds_gpu_state(el.value, depth + 1)
                       for el in expr.elements)
        if type(expr) in (cst.List, cst.Tuple):
            return any(self._holds_gpu_state(el.value, depth + 1) for el in expr.elements)
        return _gpu_value(self.ctx.value(expr))


def _gpu_value(v: Value) -> bool:
    if v.kind == TENSOR:
        return v.device != CPU and not v.assumed
    if v.kind in (DICT, LIST, TUPLE):
        members = list(v.elts) + ([v.item] if v.item is not None else [])
        return any(_gpu_value(m) for m in members)
    return False
