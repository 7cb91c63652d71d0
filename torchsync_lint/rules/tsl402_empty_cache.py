"""TSL402 empty-cache."""

import libcst as cst

from torchsync_lint.rules.base import Rule

FUNCTIONS = frozenset(
    "torch." + n
    for n in (
        "cuda.empty_cache cuda.memory.empty_cache accelerator.empty_cache accelerator.memory.empty_cache "
        "xpu.empty_cache xpu.memory.empty_cache mps.empty_cache npu.empty_cache"
    ).split()
)


class EmptyCache(Rule):
    """
    ## What it does
    Flags `torch.cuda.empty_cache()` (and `torch.accelerator`/`xpu`/`mps` forms) in hot code.

    ## Why is this bad?
    Releasing cached blocks calls `cudaFree`, which waits for the whole device: the host stops
    until every queued kernel has finished. The next step then allocates the same memory again
    with `cudaMalloc`, which is slow too. The caching allocator exists so that a training loop
    never does either.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def forward(self, x):
            y = x.softmax(-1)
            torch.cuda.empty_cache()
            return y
    ```

    ## Use instead
    ```python
    import os

    import torch.nn as nn

    # set before the first CUDA allocation: fragmentation no longer needs empty_cache()
    os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


    class Net(nn.Module):
        def forward(self, x):
            return x.softmax(-1)
    ```

    ## Fix safety
    Unsafe: memory that other processes on the same GPU need is no longer handed back during the
    step. If the cache fragments until an allocation fails, use
    `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`; empty the cache once between phases
    (after evaluation, before a large allocation), not every step.

    ## Known problems
    Reported in hot code only. When nothing is cached the call returns at once, but in a training
    step freed activations are almost always cached.

    ## Verify
    Measured on an H200 (torch 2.11): `torch.cuda.empty_cache()` with a freed 256 MiB block in the
    cache takes the whole queued `torch.cuda._sleep`. `set_sync_debug_mode("warn")` does not see
    it: use the timing oracle.

    ## References
    - https://pytorch.org/docs/stable/notes/cuda.html#memory-management
    - https://pytorch.org/docs/stable/generated/torch.cuda.empty_cache.html
    - DESIGN.md section 4
    """

    code = "TSL402"
    name = "empty-cache"
    hot_only = True
    message = (
        "`empty_cache()` frees cached blocks with `cudaFree`, which waits for the whole device; remove it "
        "from the step (fragmentation: `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`)"
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) in FUNCTIONS:
            self.report(node)
