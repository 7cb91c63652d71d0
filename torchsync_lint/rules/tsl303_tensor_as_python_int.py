"""TSL303 tensor-as-python-int."""

from typing import Dict, FrozenSet, Optional, Tuple

import libcst as cst

from torchsync_lint.inference.values import (
    CPU, CUDA, LIST, MODULE, NDARRAY, RANGE, SIZE, STR, TENSOR, TENSOR_SEQ, TUPLE, UNKNOWN,
)
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import gpu_tensor_by_evidence

ALL = None  # every positional argument
# (positional indexes or ALL, keywords) of the arguments that must be Python ints.
Spec = Tuple[Optional[FrozenSet[int]], FrozenSet[str]]


def _spec(positions: Optional[str], keywords: str = "") -> Spec:
    pos = None if positions is None else frozenset(int(p) for p in positions.split())
    return pos, frozenset(keywords.split())


# The listed calls sync only when one of these arguments is a tensor (tests/test_catalog.py reads this).
SYNC_CONDITION = "only when a listed size or index argument is a GPU tensor"
SIZED_FUNCTIONS: Dict[str, Spec] = {
    **{f"torch.{n}": _spec(None, "size") for n in "zeros ones empty rand randn".split()},
    "torch.full": _spec("0 1", "size fill_value"),  # a tensor fill value is read on the host too
    "torch.full_like": _spec("1", "fill_value"),
    "torch.empty_strided": _spec("0 1", "size stride"),
    "torch.arange": _spec(None, "start end step"),
    "torch.range": _spec(None, "start end step"),
    "torch.randint": _spec(None, "low high size"),
    "torch.randperm": _spec("0", "n"),
    "torch.eye": _spec("0 1", "n m"),
    "torch.linspace": _spec("2", "steps"),
    "torch.logspace": _spec("2", "steps"),
    "torch.tril_indices": _spec("0 1 2", "row col offset"),
    "torch.triu_indices": _spec("0 1 2", "row col offset"),
    "torch.narrow": _spec("1 2 3", "dim start length"),
    "torch.select": _spec("1 2", "dim index"),
    "torch.reshape": _spec("1", "shape"),
    "torch.split": _spec("1", "split_size_or_sections"),
    "torch.chunk": _spec("1", "chunks"),
    "torch.topk": _spec("1", "k"),
    "torch.kthvalue": _spec("1", "k"),
    "torch.roll": _spec("1", "shifts"),
    "torch.nn.functional.pad": _spec("1", "pad"),
    "torch.nn.functional.interpolate": _spec("1", "size"),
    "torch.nn.functional.one_hot": _spec("1", "num_classes"),
}
SIZED_METHODS: Dict[str, Spec] = {
    **{n: _spec(None, "size shape sizes")
       for n in "view reshape expand repeat tile new_zeros new_ones new_empty".split()},
    **{n: _spec(None, "dim start length index size step") for n in "narrow select unfold resize_".split()},
    "new_full": _spec("0 1", "size fill_value"),
    "split": _spec("0", "split_size"),
    "chunk": _spec("0", "chunks"),
    "topk": _spec("0", "k"),
    "kthvalue": _spec("0", "k"),
    "roll": _spec("0", "shifts"),
    "unflatten": _spec("1", "sizes"),
}
# Python containers whose `[i]` calls `operator.index(i)` (ModuleList / Sequential included).
INT_INDEXED = frozenset((LIST, TUPLE, RANGE, STR, SIZE, TENSOR_SEQ, MODULE))


HOST_TABLE_MESSAGE = (
    "a CPU tensor indexed by a GPU tensor reads the index on the host (only a 0-dim one is accepted) "
    "and waits for the GPU; keep the table on the index's device (a buffer, or `.to(device)` where the "
    "index is moved)"
)


class TensorAsPythonInt(Rule):
    """
    ## What it does
    Flags a GPU (or unknown-device) tensor where Python needs an `int`: `range(t)`, indexing a
    list, tuple or `nn.ModuleList` with a tensor (`lst[t]`), indexing a tensor with a 0-dim integer
    tensor (`boxes[scores.argmax()]`) or a CPU tensor with a GPU one, which only a 0-dim index can
    be (`self.alphas_cumprod[t]`, `t` from timesteps a method moved to the device), slice bounds (`x[:t]`,
    `x[t[0]:]`), and sizes or counts of torch calls: `torch.zeros(t.max())`,
    `torch.arange(0, t.max())`, `x.new_zeros(t)`, `x.view(t, -1)`, `reshape`, `expand`, `repeat`,
    `x.narrow(0, t[0], 4)`, `torch.split(x, t)`, `topk(t)`, `one_hot(y, num_classes=t)`, and
    the fill value of `torch.full((n,), t)` / `x.new_full(size, t)`, which is read as a Python
    number (`x.fill_(t)` takes a 0-dim tensor on the device and is not reported).

    ## Why is this bad?
    Python converts the tensor with `__index__`, which reads its value on the host: the host
    waits for every kernel queued before it. A shape that depends on data also forces every later
    kernel launch to wait for it, and breaks CUDA graphs and `torch.compile` graphs (measured:
    `range(t)`, `lst[t]`, `x[:t[0]]`, `torch.zeros(t.max())` and `x.narrow(0, t[0], 4)` sync).

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class Pad(nn.Module):
        def forward(self, x, lengths):
            out = torch.zeros(lengths.max(), x.shape[1], device=x.device)
            return out
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class Pad(nn.Module):
        def forward(self, x, lengths):
            out = torch.zeros(x.shape[0], x.shape[1], device=x.device)  # a static upper bound
            return out
    ```

    ## Fix safety
    Unsafe: shapes change. Compute sizes from `.shape` / `.size()` (Python ints, no sync), pad
    to a static maximum and mask, or index with tensors (`x[idx]`, `index_select`, `gather`)
    instead of Python containers. A size that really depends on data must be read once, outside
    the step.

    ## Known problems
    Reported only when inference says the value is a tensor not known to be on the CPU, and for
    methods only when the receiver is a tensor. `range(t.item())` and `torch.zeros(int(n))` are one
    finding each (TSL001, TSL004); `torch.split(x, t.tolist())` is TSL002. Indexing a tensor with a
    tensor of one or more dimensions (`x[t]`) is a gather, not a sync, and is not reported. Indexing a `dict` with a tensor
    hashes it by identity and is not reported. Unannotated `forward` inputs after the first are
    tensors by convention only (ints and flags are passed too) and are not reported here; annotate
    them (`mask: Tensor`) to have them checked. A tensor index is reported only when inference
    knows it has no dimensions (a full reduction such as `argmax()`); `x[t]` with a 1-d `t` is a
    gather.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: a sync waits
    for the sleep; `set_sync_debug_mode("warn")` reports the `cudaMemcpyAsync` of
    `aten::_local_scalar_dense`.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
    - DESIGN.md section 4 (slicing or sizing with a tensor syncs)
    """

    code = "TSL303"
    name = "tensor-as-python-int"
    message = (
        "a tensor used as a Python int (size, range, slice, list index, fill value) waits for the GPU; "
        "take sizes from `.shape`, keep shapes static, index with tensors, or `x.fill_(t)` for values"
    )

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q == "builtins.range":
            self._check_args(node, (None, frozenset()))
        elif q in SIZED_FUNCTIONS:
            self._check_args(node, SIZED_FUNCTIONS[q])
        elif q is None:
            method = self.ctx.tensor_method(node)
            if method in SIZED_METHODS:
                self._check_args(node, SIZED_METHODS[method])

    def visit_Subscript(self, node: cst.Subscript) -> None:
        container = None
        for element in node.slice:
            s = element.slice
            if type(s) is cst.Slice:
                for bound in (s.lower, s.upper, s.step):
                    if bound is not None:
                        self._check_int(bound)
            else:
                if container is None:
                    container = self.ctx.value(node.value).kind
                if container in INT_INDEXED:
                    self._check_int(s.value)
                elif container in (TENSOR, NDARRAY, UNKNOWN):
                    # `boxes[scores.argmax()]`, and `x[i] = v` with it: a 0-dim integer tensor
                    # index is read with __index__ (measured: truth rows asint-20, -21, -23), by
                    # a tensor, an array or a sequence alike: what is indexed need not be known
                    v = self.ctx.value(s.value)
                    if v.zero_dim and v.dtype == "int" and gpu_tensor_by_evidence(v):
                        self.report(s.value)
                    elif self._host_table_device_index(node, v):
                        self.report(s.value, HOST_TABLE_MESSAGE)

    def _host_table_device_index(self, node: cst.Subscript, v) -> bool:
        """``self.alphas_cumprod[t]``: a CPU tensor indexed by a tensor on the GPU, or moved there by a
        method after ``__init__`` made it on the CPU (``t`` from ``set_timesteps(device)``'s timesteps).
        PyTorch refuses a GPU index with dimensions for a CPU tensor (on the H200, torch 2.11: "indices
        should be either on cpu or on the same device"), so where the code runs the index has none
        and is read with ``__index__`` (diffusers' schedulers under their pipelines synced so)."""
        base = self.ctx.value(node.value)
        if not (base.kind == TENSOR and base.device == CPU and not base.cpu_at_init and not base.assumed):
            return False
        return (v.kind == TENSOR and not v.assumed and v.dtype in ("int", None) and not v.ndim
                and (v.device == CUDA or (v.device is None and v.cpu_at_init)))

    def _check_args(self, call: cst.Call, spec: Spec) -> None:
        positions, keywords = spec
        positional = 0
        for a in call.args:
            if a.star:
                return
            if a.keyword is None:
                if positions is None or positional in positions:
                    self._check_size(a.value)
                positional += 1
            elif a.keyword.value in keywords:
                self._check_size(a.value)

    def _check_size(self, expr: cst.BaseExpression) -> None:
        if type(expr) in (cst.Tuple, cst.List):
            for el in expr.elements:
                if type(el) is cst.Element:
                    self._check_int(el.value)
        else:
            self._check_int(expr)

    def _check_int(self, expr: cst.BaseExpression) -> None:
        # an unannotated forward input used as a size is rather evidence that it is an int
        if gpu_tensor_by_evidence(self.ctx.value(expr)):
            self.report(expr)
