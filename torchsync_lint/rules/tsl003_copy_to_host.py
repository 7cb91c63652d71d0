"""TSL003 copy-to-host."""

import libcst as cst

from torchsync_lint.inference.values import CPU, LIST, TENSOR, TUPLE, UNKNOWN
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, is_true, non_blocking, on_device_batch


# The Tensor methods this rule reports, each only with a host destination (read by rules.claims).
# (not ``*_METHODS``: rules.claims reads those as method names that must all be in the catalog)
HOST_COPIES = frozenset("torch.Tensor." + m for m in ("cpu", "to", "numpy", "copy_"))
_COPY_METHODS = frozenset(q.rsplit(".", 1)[1] for q in HOST_COPIES)
SYNC_CONDITION = "only when the destination is the host: `.cpu()`, `.to('cpu')`, `.numpy(force=True)`, `host.copy_(gpu)`"
# Constructors that read a list of GPU tensors element by element onto the host (private: the rule
# claims them only for that form, measured by the truth table's h2d-33).
_HOST_CONSTRUCTORS = frozenset(("torch.tensor", "torch.as_tensor"))

class CopyToHost(Rule):
    """
    ## What it does
    Flags blocking copies of a GPU (or unknown-device) tensor to the host: `.cpu()`,
    `.to("cpu")`, `.to(torch.device("cpu"))`, `.to(device="cpu")`, `.to(cpu_tensor)` and
    `cpu_buffer.copy_(t)` without `non_blocking=True`, `.numpy(force=True)`, a GPU tensor
    stored into a CPU tensor (`counts[i] = t.sum()` where `counts = torch.zeros(n)`), and a host
    tensor made of a list of GPU tensors (`torch.tensor([loss_a, loss_b])`, `torch.tensor(losses)`). `p.cpu()`
    is a copy even where inference cannot tell what `p` is: only tensors and modules have the
    method, and either copies from the GPU unless it is already on the host (on seven libraries
    under GPU workloads, every such statement that ran synced).

    ## Why is this bad?
    A blocking device-to-host copy waits until every kernel queued before it has finished, then
    copies. The CPU stops launching work while it waits, so the GPU runs dry at the end of the
    copy. Once per step (for metrics, logging, a numpy post-processing step) this can cost more
    than the step itself.

    ## Example
    ```python
    import torch.nn as nn


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(16, 10)
            self.preds = []

        def forward(self, x):
            logits = self.net(x)
            self.preds.append(logits.argmax(-1).cpu())
            return logits
    ```

    ## Use instead
    ```python
    import torch.nn as nn


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(16, 10)
            self.preds = []

        def forward(self, x):
            logits = self.net(x)
            self.preds.append(logits.argmax(-1).detach())  # concatenate and copy once, after the epoch
            return logits
    ```

    ## Fix safety
    Unsafe: the value stays on the GPU, so host code that reads it (numpy, Python lists) must move
    to the end of the epoch. `.to("cpu", non_blocking=True)` into pinned memory does not block and
    is not reported, but it is a correctness hazard: the host data is not valid until the stream
    is synchronised (record a `torch.cuda.Event` after the copy and `event.synchronize()` before
    reading it, ideally one step later).

    ## Known problems
    A module known as one (`model.cpu()` of an `nn.Module`) is not reported; `.cpu()` of a value
    inference cannot place is, and it may be a module or a tensor already on the host (then the
    call copies nothing). A tensor known to be made on the CPU is not reported. `.numpy()` without `force=True` is not reported: it raises on a CUDA
    tensor, so a working `.numpy()` reads a CPU tensor (`.cpu().numpy()` is one finding, on the
    `.cpu()`). A copy to a device held in a variable (`.to(self.host_device)`) is reported only
    when inference knows the variable names the CPU.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: a blocking
    copy waits for the sleep; `set_sync_debug_mode("warn")` reports the device-to-host
    `cudaMemcpyAsync`.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.Tensor.to.html
    - https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html
    """

    code = "TSL003"
    name = "copy-to-host"
    message = (
        "blocking copy to the host waits for the GPU; keep the tensor on the device and copy once "
        "outside the step (or `.to('cpu', non_blocking=True)` into pinned memory, then sync on an event)"
    )

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if self.ctx.qualname(f) in _HOST_CONSTRUCTORS:
            self._host_tensor_of_gpu_values(node)
            return
        if type(f) is not cst.Attribute or self.ctx.qualname(f) is not None:
            return
        method = f.attr.value
        if method == "copy_":
            self._copy_into(node, f)
            return
        if method not in _COPY_METHODS:
            return
        if method == "cpu" and not node.args and self.ctx.value(f.value).kind == UNKNOWN:
            self.report(f.attr)  # a tensor or a module, either on the GPU or nothing to copy
            return
        if not (self.ctx.maybe_gpu_tensor(f.value) or on_device_batch(self.ctx.value(f.value))):
            return
        # report the method name: in a chain split over lines it is where the copy happens
        if method == "cpu":
            self.report(f.attr)
        elif method == "numpy":
            force = arg(node, 0, "force")
            if force is not None and is_true(force.value):
                self.report(f.attr)
        elif self.ctx.value(node).device == CPU and not non_blocking(node):
            self.report(f.attr)

    def visit_Assign(self, node: cst.Assign) -> None:
        """``host[i] = t``: writing a GPU value into a CPU tensor copies it to the host (measured:
        syncs, like ``host[i].copy_(t)``)."""
        value = None
        for target in node.targets:
            t = target.target
            if type(t) is not cst.Subscript:
                continue
            base = self.ctx.value(t.value)
            if base.kind != TENSOR or base.device != CPU:
                continue
            value = value or self.ctx.value(node.value)
            if value.maybe_gpu:
                self.report(t)

    def _host_tensor_of_gpu_values(self, node: cst.Call) -> None:
        """``torch.tensor([loss_a, loss_b])``, ``torch.tensor(losses)`` of GPU tensors, without a
        device (or with the CPU's): each element is read on the host (measured: h2d-33). With a GPU
        device the copy back is TSL202's."""
        data = arg(node, 0, "data")
        device = arg(node, None, "device")
        if data is None or (device is not None and self.ctx.value(node).device != CPU):
            return
        v = self.ctx.value(data.value)
        if v.kind in (LIST, TUPLE) and (any(e.maybe_gpu and not e.assumed for e in v.elts)
                                        or (v.item is not None and v.item.maybe_gpu and not v.item.assumed)):
            self.report(node)

    def _copy_into(self, node: cst.Call, f: cst.Attribute) -> None:
        """``host_buf.copy_(t)``: a CPU tensor filled from a GPU one (measured: syncs)."""
        src = arg(node, 0, "src")
        if src is None or self.ctx.value(f.value).device != CPU or not self.ctx.is_tensor(f.value):
            return
        blocking = arg(node, 1, "non_blocking")
        if self.ctx.maybe_gpu_tensor(src.value) and not (blocking is not None and is_true(blocking.value)):
            self.report(f.attr)
