"""TSL204 blocking-batch-copy."""

import libcst as cst

from torchsync_lint.inference.values import BATCH, CUDA
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._batches import sliced_per_step
from torchsync_lint.rules._common import names_a_gpu_device, non_blocking

SLICED_MESSAGE = (
    "a batch cut from a host store each step and copied to the GPU without `non_blocking=True` waits "
    "for every queued kernel; keep the store on the device and index it there, or load batches "
    "with a pinned DataLoader"
)

PAGEABLE_MESSAGE = (
    "a batch from pageable memory is copied to the GPU even with `non_blocking=True`: a large copy is staged "
    "by the host, which waits; create the DataLoader with `pin_memory=True`"
)


class BlockingBatchCopy(Rule):
    """
    ## What it does
    Flags the copy to the GPU of a batch that a `DataLoader` yields or a tokenizer returns
    (`batch.to(device)`, `images.cuda()`, `{k: v.to(device) for k, v in batch.items()}`, and the
    same inside a helper that the loop passes the batch to, in this file or another) when it
    blocks: without `non_blocking=True`, or with it but from memory that is not pinned. A batch
    cut from a store each step of a loop and then moved (`data[i:i + bs].to(device)` in a loop
    over `i`) is such a batch too, whatever the store's type: a store already on the device would
    need no move.

    ## Why is this bad?
    A blocking copy to the GPU returns only after every kernel queued before it has finished,
    so each step the CPU stops launching work until the GPU has drained: the GPU idles while the
    next batch is copied and the next step is launched. With `non_blocking=True` the copy joins
    the stream without a wait, but only from pinned (page-locked) memory: a large batch in
    pageable memory is staged by the host, which waits (measured on an H200: 16 MB pageable with
    `non_blocking=True` stalls for the whole queued kernel; 4 KB pinned does not).

    ## Example
    ```python
    from torch.utils.data import DataLoader


    def train(model, dataset, opt, device):
        loader = DataLoader(dataset, batch_size=64)
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            loss = model(images, labels)
            loss.backward()
            opt.step()
    ```

    ## Use instead
    ```python
    from torch.utils.data import DataLoader


    def train(model, dataset, opt, device):
        loader = DataLoader(dataset, batch_size=64, pin_memory=True)
        for images, labels in loader:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            loss = model(images, labels)
            loss.backward()
            opt.step()
    ```

    ## Fix safety
    Unsafe, and not automatic: `non_blocking=True` only overlaps from pinned memory, so the
    DataLoader needs `pin_memory=True` as well (a custom `collate_fn` must return tensors, or
    objects with a `pin_memory()` method, for the loader to pin them). Code on the host that
    reads the copied tensor is not affected; the GPU orders the copy before the kernels that use it.

    ## Known problems
    A batch is known only from a `torch.utils.data.DataLoader` this code builds or receives as
    an annotated parameter, or passes along (call sites in the project), and from calls that ask
    for torch tensors by Hugging Face's convention (`tokenizer(texts, return_tensors="pt")`, host
    tensors), and from an iterable of unknown type whose items a training step (a loop that calls
    `backward()` or `step()`) or an evaluation loop (under `torch.no_grad()` or
    `torch.inference_mode()`) moves to a device, in its body or in a helper of the same file it
    passes them to; a loop with autograd on and no step is not taken for one (a model-parallel
    gather of GPU tensors looks the same). Loaders from other libraries (Lightning moves batches
    itself) are not followed. With `non_blocking=True`, a
    loader whose `pin_memory` is unknown (a parameter) is not reported. A small batch in
    pageable memory does not stall with `non_blocking=True` (measured: 4 KB); every batch from
    a non-pinned loader is reported regardless of its size.

    ## Verify
    `torchsync-lint --verify` times the copy after a queued `torch.cuda._sleep`; see the truth
    table rows h2d-10 (pinned, blocking), h2d-12 (pinned, non-blocking) and h2d-14 (16 MB
    pageable, non-blocking).

    ## References
    - https://pytorch.org/docs/stable/data.html#memory-pinning
    - https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html
    """

    code = "TSL204"
    name = "blocking-batch-copy"
    message = (
        "copying a host batch (a DataLoader's, a tokenizer's) to the GPU without `non_blocking=True` waits for "
        "every queued kernel; pin it (`pin_memory=True` in the DataLoader, `.pin_memory()`) and copy with "
        "`.to(device, non_blocking=True)`"
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (type(func) is cst.Attribute and func.attr.value in ("to", "cuda")):
            return
        batch = self.ctx.value(func.value)
        if batch.kind != BATCH and sliced_per_step(self.ctx, func.value) and not non_blocking(node) and (
                func.attr.value == "cuda" or names_a_gpu_device(self.ctx, node)):
            self.report(node, SLICED_MESSAGE)
            return
        if batch.kind != BATCH or batch.device == CUDA or not (func.attr.value == "cuda" or names_a_gpu_device(self.ctx, node)):
            return
        if not non_blocking(node):
            self.report(node)
        elif not batch.pinned and not batch.assumed:  # `assumed`: a loader whose pin_memory is unknown
            self.report(node, PAGEABLE_MESSAGE)
