"""TSL411 load-to-device."""

import libcst as cst

from torchsync_lint.inference.values import CPU, DEVICE, FUNC, STR, TENSOR
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg

LOADS = frozenset(("torch.load",))


class LoadToDevice(Rule):
    """
    ## What it does
    Flags `torch.load` in hot code (a training loop, or a function it calls every step) when
    what it loads may land on the GPU: `map_location` names a device that is not known to be
    the CPU (`map_location=device`, `"cuda"`), or is left out, so each tensor goes back to the
    device it was saved from (a checkpoint written during GPU training holds GPU tensors).

    ## Why is this bad?
    Every tensor of the file is copied from pageable host memory to the GPU, and each such copy
    waits for all queued kernels: the GPU drains, then idles while the file is read (measured on
    an H100: `torch.load(f, map_location=d)` of a host checkpoint stalls for the whole queued
    kernel, as does loading one saved from the GPU without `map_location`).

    ## Example
    ```python
    import torch


    def train(model, loader, opt, path):
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            opt.step()
            model.load_state_dict(torch.load(path))  # reload the best weights
    ```

    ## Use instead
    ```python
    import torch


    def train(model, loader, opt, path):
        for x, y in loader:
            loss = model(x, y)
            loss.backward()
            opt.step()
        # once, after training; load_state_dict copies host tensors into the parameters
        model.load_state_dict(torch.load(path, map_location="cpu"))
    ```

    ## Fix safety
    Not automatic: where to load is the user's choice. `map_location="cpu"` keeps the loaded
    tensors on the host (`load_state_dict` then copies them into GPU parameters, which still waits,
    once); load outside the step, or keep the weights in memory instead of a file.

    ## Known problems
    Reported in hot code only (loading a checkpoint at start-up costs nothing per step). Without
    `map_location`, what the file holds decides: a checkpoint saved from host tensors loads to the
    host without waiting, and is reported all the same (truth table row load-02).

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`; truth
    table rows load-01 to load-04.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.load.html
    - https://pytorch.org/tutorials/recipes/recipes/save_load_across_devices.html
    """

    code = "TSL411"
    name = "load-to-device"
    message = (
        "`torch.load` copies each tensor to the GPU (the `map_location` given, or the device it was saved from) "
        "and waits for the GPU; load outside the step, or with `map_location=\"cpu\"`"
    )
    hot_only = True

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) not in LOADS or any(a.star for a in node.args):
            return
        where = arg(node, 1, "map_location")
        if where is None or self._may_be_gpu(where.value):
            self.report(node)

    def _may_be_gpu(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is cst.SimpleString:
            text = expr.evaluated_value
            return not (isinstance(text, str) and text.startswith(("cpu", "meta")))
        if type(expr) in (cst.Lambda, cst.Dict):
            return False  # `lambda storage, loc: storage` keeps the host; a dict remaps by name
        if type(expr) is cst.Call and self.ctx.qualname(expr.func) == "torch.device" and expr.args:
            return self._may_be_gpu(expr.args[0].value)
        v = self.ctx.value(expr)
        if v.kind in (DEVICE, STR, TENSOR):
            return v.device != CPU
        return v.kind != FUNC  # a function maps storages as it likes; anything else may name a GPU
