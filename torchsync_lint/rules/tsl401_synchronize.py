"""TSL401 explicit-synchronize."""

import libcst as cst

from torchsync_lint.inference.values import EVENT, STREAM, TENSOR, UNKNOWN
from torchsync_lint.rules.base import Rule

# Device-wide waits: the host blocks until every queued kernel has finished.
DEVICE_SYNCS = frozenset(
    p + "synchronize" for p in ("torch.cuda.", "torch.accelerator.", "torch.xpu.", "torch.mps.", "torch.npu.")
)
# Unbound methods called on a stream or event: `torch.cuda.Stream.synchronize(s)`.
HANDLE_SYNC_SUFFIXES = ("Stream.synchronize", "Event.synchronize")


class ExplicitSynchronize(Rule):
    """
    ## What it does
    Flags explicit host waits in hot code: `torch.cuda.synchronize()`,
    `torch.accelerator.synchronize()` (and the `xpu`/`mps` forms), and `.synchronize()` on a
    stream or an event (`torch.cuda.current_stream().synchronize()`, `stream.synchronize()`,
    `event.synchronize()`).

    ## Why is this bad?
    The host stops until the GPU has drained the device, the stream or the event, so it cannot
    queue the next kernels while the GPU works: each step pays the whole launch latency again
    and the GPU idles in between. In a training step it is almost always left over from timing
    or debugging code.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def forward(self, x):
            y = x.relu()
            torch.cuda.synchronize()
            return y
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def forward(self, x):
            return x.relu()  # no wait: the next op is queued behind this one anyway


    def timed_step(model, x):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        y = model(x)
        end.record()  # read start.elapsed_time(end) later, once end.query() is True
        return y, (start, end)
    ```

    ## Fix safety
    Unsafe: a wait that orders work across streams must become `stream.wait_event(event)` or
    `stream.wait_stream(other)` (a GPU-side wait), and one that protects host memory (a pinned
    buffer about to be reused) must become `event.record()` followed by a check of
    `event.query()`. Timing code should record CUDA events and read them outside the step.

    ## Known problems
    Reported in hot code only: a wait at the end of a run, at a checkpoint or in a benchmark
    harness costs nothing per step. A `.synchronize()` on a receiver inference cannot type is
    reported in files that use torch (other libraries' `synchronize` are device waits too); one
    on `self` or a module is not. `event.wait()`, `stream.wait_event()` and `wait_stream()` are
    GPU-side waits and never reported. A stream with no queued work returns at once, but the
    call is still reported.

    ## Verify
    Measured on an H200 (torch 2.11): `torch.cuda.synchronize()`, `torch.accelerator.synchronize()`,
    `current_stream().synchronize()` and `event.synchronize()` take the whole queued
    `torch.cuda._sleep`; `event.query()`, `event.wait(stream)` and `wait_stream` do not.
    `set_sync_debug_mode("warn")` misses device and event synchronisation: use the timing oracle
    or `torch.cuda._gpu_trace` callbacks.

    ## References
    - https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution
    - https://pytorch.org/docs/stable/generated/torch.cuda.Event.html
    - DESIGN.md section 4
    """

    code = "TSL401"
    name = "explicit-synchronize"
    hot_only = True
    message = (
        "explicit `synchronize()` blocks the host until the GPU drains; order streams with "
        "`event.record()`/`stream.wait_event()`, poll `event.query()`, time with CUDA events outside the step"
    )

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        q = self.ctx.qualname(f)
        if q is not None:
            if q in DEVICE_SYNCS or (q.startswith("torch.") and q.endswith(HANDLE_SYNC_SUFFIXES)):
                self.report(node)
            return
        if not (type(f) is cst.Attribute and f.attr.value == "synchronize"):
            return
        # A tensor has no synchronize(): a receiver inferred as one is a guess (a forward input).
        receiver = self.ctx.value(f.value)
        if receiver.kind in (STREAM, EVENT, TENSOR) or (receiver.kind == UNKNOWN and self.ctx.index.mentions_torch):
            self.report(node)
