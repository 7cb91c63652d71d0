"""TSL203 index-put-python-scalar."""

import libcst as cst

from torchsync_lint.inference.values import CPU, LIST, NDARRAY, NUMBER, TENSOR, TUPLE, UNKNOWN
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._indexing import (
    host_sequence,
    indexes_device_tensor,
    is_bool_mask,
    is_device_int_index,
    positions,
)

HOST_VALUES = (NUMBER, LIST, TUPLE, NDARRAY)
ELEMENT_MESSAGE = (
    "writing a Python number into one element of a GPU tensor (every dimension indexed) copies it "
    "from the host and waits (measured; a slice or a GPU 0-dim value does not); build the tensor with "
    "the value in it, or write a slice: `x[i, j:j + 1] = v`"
)


def is_literal_bool(e: cst.BaseExpression) -> bool:
    return type(e) is cst.Name and e.value in ("True", "False")

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.Tensor.index_fill_": "default",
}


class IndexPutPythonScalar(Rule):
    """
    ## What it does
    Flags `x[idx] = value` where `idx` is an integer index tensor that may live on the GPU, or a
    tuple of them (what `nonzero(..., as_tuple=True)` and one-argument `torch.where(cond)`
    return), and `value` lives on the host: a Python number (also a name or `self` attribute
    that holds one), a list, or a CPU tensor. Also flags writing a Python number into *one
    element* of a GPU tensor, every dimension indexed by a Python int (`kernel[1, 1] = 5.0` on a
    `torch.ones((3, 3), device=d)`): measured to sync, unlike a slice (`x[0, 1:3] = 1.0`) or a
    row (`x[0] = 1.0`), which become `fill_`.

    ## Why is this bad?
    PyTorch wraps the host value in a CPU tensor and copies it to the GPU for `index_put_` with a
    blocking copy, so the CPU waits for every queued kernel (measured on an H200 for
    `x[idx] = 1`, `x[idx, 0] = 0.0`, `x[inds] = -1` and a CPU 0-dim tensor value). It surprises
    because `x[bool_mask] = 0.0` does not sync: PyTorch turns that one into `masked_fill_`.

    ## Example
    ```python
    import torch.nn as nn


    class Relabel(nn.Module):
        def forward(self, target, idx):
            target = target.long()
            idx = idx.long()
            target[idx] = -1
            return target
    ```

    ## Use instead
    ```python
    import torch.nn as nn


    class Relabel(nn.Module):
        def forward(self, target, idx):
            target = target.long()
            idx = idx.long()
            target.index_fill_(0, idx, -1)
            return target
    ```

    ## Fix safety
    Safe: `x.index_fill_(dim, idx, v)` for one index tensor, or
    `x.index_put_(indices, torch.full((), v, device=x.device))` for a tuple of index tensors
    (the 0-dim value is made on the device, no copy). Often the indices came from
    `nonzero(mask)`: then `x.masked_fill_(mask, v)` or `torch.where(mask, v, x)` removes both syncs.

    ## Known problems
    The index must be known to be an integer tensor (`nonzero`, `argmax`, `argsort`, `.long()`,
    `torch.where(cond)`, a `LongTensor` annotation); a tensor of unknown dtype is not reported
    (it may be a boolean mask, which is sync-free with a scalar). A value inference cannot place
    is not reported. `x[idx] += 1` does not sync (its value is a GPU tensor) and is not reported.
    A one-element write is reported only where the tensor's rank is known from the factory that
    made it (`torch.zeros(1, n, 1)`, `torch.ones((3, 3))`, `*_like` of such a tensor), and each
    index is a Python int or arithmetic inference cannot type (`i + shift`: an int or an
    integer tensor, either way a wait).

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: the host
    waits for the sleep; `set_sync_debug_mode("warn")` reports the host-to-device copy.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.Tensor.index_fill_.html
    - https://pytorch.org/docs/stable/generated/torch.Tensor.index_put_.html
    - seeds/001 (masked loss), DESIGN.md section 4
    """

    code = "TSL203"
    name = "index-put-python-scalar"
    message = (
        "assigning a host value through an integer index tensor copies it to the GPU and waits; "
        "use `x.index_fill_(dim, idx, v)` or `x.index_put_(idx, torch.full((), v, device=x.device))`"
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        value = self.ctx.value(node.value)
        if not (value.kind in HOST_VALUES or (value.kind == TENSOR and value.device == CPU)):
            return
        for target in node.targets:
            t = target.target
            if type(t) is not cst.Subscript:
                continue
            if value.kind == NUMBER and self._one_element(t):
                self.report(t, ELEMENT_MESSAGE)
                continue
            index = positions(self.ctx, t)
            if (
                any(is_device_int_index(v) for v in index)
                and not any(is_bool_mask(v) or host_sequence(v) for v in index)  # TSL103 / TSL201
                and indexes_device_tensor(self.ctx, t, index)
            ):
                self.report(t)

    def _one_element(self, t: cst.Subscript) -> bool:
        """``kernel[1, 1] = 5.0`` on a GPU tensor whose every dimension is indexed by a Python int
        (its rank known from the factory that made it): a 0-dim view filled by a host copy."""
        base = self.ctx.value(t.value)
        if not (base.maybe_gpu and base.ndim is not None and base.ndim == len(t.slice)):
            return False
        for el in t.slice:
            if type(el.slice) is not cst.Index or el.slice.star is not None:
                return False
            v = self.ctx.value(el.slice.value)
            if (v.kind != NUMBER or v.dtype not in ("int", None) or is_literal_bool(el.slice.value)) and not (
                    v.kind == UNKNOWN and _arithmetic(el.slice.value)):
                return False
        return True


def _arithmetic(expr: cst.BaseExpression) -> bool:
    """``index + int(start) + shift``: an int or an integer tensor, never a slice, ``None`` or a boolean
    mask (either way the write of a host scalar waits: truth rows idxput-02, idxput-16)."""
    return type(expr) is cst.BinaryOperation and type(expr.operator) in _INDEX_ARITHMETIC


_INDEX_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
