"""TSL204 blocking-batch-copy."""

from typing import Optional

import libcst as cst

from torchsync_lint.inference.values import BATCH, CPU, DEVICE, STR, TENSOR, UNKNOWN
from torchsync_lint.rule import Rule
from torchsync_lint.rules._common import arg, is_true

PAGEABLE_MESSAGE = (
    "a batch from pageable memory is copied to the GPU even with `non_blocking=True`: a large copy is staged "
    "by the host, which waits; create the DataLoader with `pin_memory=True`"
)


class BlockingBatchCopy(Rule):
    """
    ## What it does
    Flags the copy of a batch that a `DataLoader` yields to the GPU (`batch.to(device)`,
    `images.cuda()`, `{k: v.to(device) for k, v in batch.items()}`, and the same inside a helper
    that the loop passes the batch to, in this file or another) when it blocks: without
    `non_blocking=True`, or with it but from a loader made without `pin_memory=True`.

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
    an annotated parameter, or passes along (call sites in the project): loaders from other
    libraries (Lightning moves batches itself) are not followed. With `non_blocking=True`, a
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
        "copying a DataLoader batch to the GPU without `non_blocking=True` waits for every queued kernel; "
        "create the DataLoader with `pin_memory=True` and copy with `.to(device, non_blocking=True)`"
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda")):
            return
        batch = self.ctx.value(func.value)
        if batch.kind != BATCH or not self._moves_to_gpu(node, func.attr.value):
            return
        blocking = arg(node, None, "non_blocking")
        if blocking is None and func.attr.value == "to":
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            blocking = next((cst.Arg(v) for v in positional[1:3] if is_true(v)), None)
        if blocking is None or not is_true(blocking.value):
            self.report(node)
        elif not batch.pinned and self._loader_known_unpinned(batch):
            self.report(node, PAGEABLE_MESSAGE)

    def _moves_to_gpu(self, call: cst.Call, method: str) -> bool:
        if method == "cuda":
            return True
        device = arg(call, 0, "device")
        if device is None:
            return False
        v = self.ctx.value(device.value)
        if v.kind in (DEVICE, STR, TENSOR):
            return v.device != CPU
        return v.kind == UNKNOWN and self._named_device(device.value)

    @staticmethod
    def _named_device(expr: cst.BaseExpression) -> bool:
        """`.to(device)`, `.to(self.device)`: an unknown value whose name says device (a dtype
        would say dtype, and the evaluator types those)."""
        name: Optional[str] = None
        if isinstance(expr, cst.Name):
            name = expr.value
        elif isinstance(expr, cst.Attribute):
            name = expr.attr.value
        return name is not None and name.lower().endswith(("device", "dev"))

    @staticmethod
    def _loader_known_unpinned(batch) -> bool:
        # a BATCH value is made from a DataLoader whose pin_memory was read at its construction;
        # `assumed` marks one that came through an annotated parameter (pin_memory unknown)
        return not batch.assumed
