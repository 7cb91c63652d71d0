"""TSL201 host-sequence-index."""

import libcst as cst

from torchsync_lint.rules.base import Rule
from torchsync_lint.rules import _fixes as fx
from torchsync_lint.rules._indexing import host_sequence, indexes_device_tensor, positions


class HostSequenceIndex(Rule):
    """
    ## What it does
    Flags indexing a tensor that may live on the GPU with a host-side sequence at any index
    position: a Python `range(...)`, a list (`x[[0, 2]]`), a tuple inside the index
    (`x[(0, 2), :]`), a numpy array, or a tensor known to be on the CPU (`torch.tensor([0, 2])`,
    `torch.arange(n)` without `device=`, a CPU boolean mask). Reads and writes alike.

    ## Why is this bad?
    PyTorch turns the sequence into an index tensor on the host and copies it to the GPU with a
    blocking copy: the CPU waits for every queued kernel before the indexing can even start
    (measured on an H200 for `x[range(n), t]`, `x[[0, 2]]`, `x[np_array]`, `x[cpu_tensor]`). A
    classic case is `pred[range(n), target]` in a loss, which waits once per step.

    ## Example
    ```python
    import torch.nn as nn


    class NLL(nn.Module):
        def forward(self, pred, target):
            return -pred[range(target.shape[0]), target].mean()
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class NLL(nn.Module):
        def forward(self, pred, target):
            rows = torch.arange(target.shape[0], device=pred.device)
            return -pred[rows, target].mean()
    ```

    ## Fix safety
    Safe when the index is built on the tensor's device: `torch.arange(n, device=x.device)`, or
    a constant index made once, as a buffer registered in `__init__`
    (`self.register_buffer("idx", torch.tensor([0, 2]), persistent=False)`), which moves with the
    module. `torch.gather(pred, 1, target[:, None])` also avoids the row index.

    Autofix (safe, `--fix`): `x[range(n), t]` becomes `x[torch.arange(n, device=x.device), t]`
    (same values, dtype `int64` as Python ints give), when `x` is a name or an attribute; lists,
    numpy arrays and CPU tensors are not rewritten.

    ## Known problems
    `x[0, 2]` (plain integers) and slices are not sequences and are never reported, nor is a
    list of tensors that is the whole index (PyTorch reads it as a tuple of index tensors); a
    list written out at one of several positions (`x[:, [idx]]`) is reported whatever its
    members are: Python ints or 0-dim tensors, read on the host (truth row hostidx-14; a tensor
    of more elements there raises). A list whose members
    inference cannot see (a comprehension, a helper's result) is not reported: it may hold
    slices or tensors (transformers' esmfold indexes with a list of `slice()`), so a list of
    integers built that way is missed. A
    0-dim CPU integer tensor index does not sync but is reported when inference cannot see
    that it has no dimensions. The
    indexed value must be a tensor not known to be on the CPU; a value inference cannot type
    counts when the index also holds a tensor that may live on the GPU.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: the host
    waits for the sleep; `set_sync_debug_mode("warn")` reports the host-to-device copy.

    ## References
    - https://pytorch.org/docs/stable/notes/cuda.html#best-practices
    - seeds/000 (weighted NLL loss), DESIGN.md section 4
    """

    code = "TSL201"
    name = "host-sequence-index"
    message = (
        "indexing a GPU tensor with a host sequence (range, list, numpy array, CPU tensor) copies the index "
        "to the device and waits; build it on the device: `torch.arange(n, device=x.device)`, or a buffer "
        "made once in `__init__`"
    )
    specific = message.replace("a host sequence (range, list, numpy array, CPU tensor)", "{what}")

    def visit_Subscript(self, node: cst.Subscript) -> None:
        index = positions(self.ctx, node)
        for i, v in enumerate(index):
            what = host_sequence(v)
            if what is None and len(node.slice) > 1 and self._listed(node.slice[i]):
                what = "a Python list"
            if what is not None:
                if indexes_device_tensor(self.ctx, node, index):
                    self.report(node, self.specific.format(what=what), fix=self._fix(node))
                return

    def _listed(self, element: cst.SubscriptElement) -> bool:
        """``x[:, [idx]]``: a list written out at one position of several. Whatever its members
        (ints, 0-dim tensors), torch turns it into an index tensor on the host and copies it (only
        a whole-index list of tensors is read as a tuple of index tensors)."""
        lst = element.slice.value if type(element.slice) is cst.Index else None
        if type(lst) is cst.ListComp:  # `[t[n - 1] for t, n in zip(targets, lengths)]`
            return not self._slice_call(lst.elt)
        return (type(lst) is cst.List and bool(lst.elements)
                and all(type(e) is cst.Element and not self._slice_call(e.value) for e in lst.elements))

    def _slice_call(self, expr: cst.BaseExpression) -> bool:
        return type(expr) is cst.Call and self.ctx.qualname(expr.func) == "builtins.slice"

    def _fix(self, node: cst.Subscript):
        """`x[range(n), t]` -> `x[torch.arange(n, device=x.device), t]`, when `x` is a name or an
        attribute (evaluating it twice changes nothing)."""
        base = node.value
        probe = base
        while type(probe) is cst.Attribute:
            probe = probe.value
        if type(probe) is not cst.Name:
            return None
        elements = list(node.slice)
        for i, el in enumerate(elements):
            call = el.slice.value if type(el.slice) is cst.Index else None
            if not (type(call) is cst.Call and self.ctx.qualname(call.func) == "builtins.range"):
                continue
            if not 1 <= len(call.args) <= 3 or any(a.keyword or a.star for a in call.args):
                return None
            torch, imports = fx.torch_name(self.ctx)
            bounds = ", ".join(fx.arg_code(a) for a in call.args)
            arange = cst.parse_expression(f"{torch}.arange({bounds}, device={fx.code(base)}.device)")
            elements[i] = el.with_changes(slice=el.slice.with_changes(value=arange))
            return fx.make(fx.SAFE, "build the index on the tensor's device with `torch.arange`", node,
                           node.with_changes(slice=elements), imports)
        return None
