"""TSL202 host-tensor-to-device."""

from typing import Optional

import libcst as cst

from torchsync_lint.inference import torch_api as api
from torchsync_lint.inference import torch_facts
from torchsync_lint.inference.defs import param_named
from torchsync_lint.inference.values import CPU, DEVICE, LIST, MODULE, NDARRAY, NUMBER, STR, TENSOR, TUPLE, UNKNOWN
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules import _fixes as fx
from torchsync_lint.rules._common import (
    arg,
    empty_literal,
    gpu_tensor_by_evidence,
    names_a_gpu_device,
    no_element_factory,
    non_blocking,
    on_self,
)
from torchsync_lint.rules._emptiness import EmptyBranches
from torchsync_lint.rules._batches import gathered_by_host_index, sliced_per_step
from torchsync_lint.rules._indexing import SLICE, positions

# Factories whose literal scalar argument `torch.full((), v)` makes with the same dtype.
SCALAR_FACTORIES = frozenset(("torch.tensor", "torch.as_tensor"))

# torch.cuda.FloatTensor([...]) and friends: host data straight into a GPU tensor
CUDA_TYPED = frozenset(
    "torch.cuda." + n
    for n in "FloatTensor DoubleTensor HalfTensor BFloat16Tensor LongTensor IntTensor ShortTensor ByteTensor "
    "CharTensor BoolTensor".split()
)

MODULE_MESSAGE = (
    "a module built here is copied to the GPU (its parameters and buffers, from the host) each time "
    "this runs, and the copy waits for the GPU; build it once in `__init__` as a submodule"
)

WHERE_MESSAGE = (
    "`torch.where` copies this CPU tensor to the GPU every step and waits; pass a Python number "
    "(`torch.where(c, x, 0.0)`) or a tensor made on the device once"
)

AT_INIT_MESSAGE = (
    "this attribute holds the CPU tensor `__init__` made until another method moves it, so this copy "
    "waits for the GPU whenever that method has not run; make it on the device in `__init__` (or "
    "register it as a buffer), or move it once where it is set"
)

GATHER_MESSAGE = (
    "rows gathered with a host index and moved to the GPU: on the host the rows are copied, on the "
    "device the index is, and either copy waits for the GPU; keep the data and the index on the "
    "device (`torch.randperm(n, device=d)`), or gather from pinned memory with `non_blocking=True`"
)

STORE_MESSAGE = (
    "storing a CPU tensor into a GPU tensor copies it from the host every time, and the copy waits "
    "for the GPU; make the value on the device (`torch.ones(..., device=x.device)`), or fill the slice "
    "there (`x[:n].fill_(v)`)"
)

# The sync-free alternatives the message names: catalog entry -> the measured variant that did not
# sync (tests/test_catalog.py checks both against catalog/data/sync_catalog.json).
SYNC_FREE = {
    "torch.full": "default",
    "torch.scalar_tensor": "default",
}


class HostTensorToDevice(Rule):
    """
    ## What it does
    Outside set-up code (`__init__`, module level), flags a tensor
    built from host data and copied to the GPU: `torch.tensor(data, device=d)` /
    `torch.as_tensor(np_array, device="cuda")` with a device that is not the CPU (also of a
    value annotated as a numpy array or a tensor, `obs: np.ndarray | torch.Tensor`),
    `x.new_tensor(data)`, `torch.cuda.FloatTensor([...])`, `.cuda()` / `.to(gpu_device)` /
    `.type_as(gpu_tensor)` of a
    tensor made on the CPU (`torch.Tensor([0.1] * 10).cuda()`, `torch.from_numpy(a).cuda()`,
    `torch.ones(10).to(device)`), and a CPU tensor operand of `torch.where` next to GPU ones
    (`torch.where(mask, x, torch.tensor(0.0))`); a CPU tensor (a 0-dim one too) stored into
    a GPU tensor (`back[:n, t] = torch.ones(n, k) * start`, `buf.copy_(torch.tensor(True))`); and a module built and moved to
    the GPU in the same expression (`GaussianFilter(3, sigma).to(device)`) inside a `forward`, a
    `__call__` or a training loop. Also rows gathered with a host index from a store inference
    cannot place and moved to the GPU (`x_tr[perm[i:i + b]]` bound as `idx`, then
    `x_tr[idx].to(device)`): whether the store is on the host (the rows are copied) or on the
    device (the index is), one blocking copy is made.

    ## Why is this bad?
    A copy from pageable host memory to the GPU without `non_blocking=True` makes the CPU wait
    for every queued kernel before it returns: measured on an H200 for each form above, even
    `torch.tensor(0.5, device=d)` and `torch.where` with a CPU 0-dim operand (which, unlike
    `x * torch.tensor(2.0)`, is copied). The data is the same every step, so the copy (and the
    wait) is pure overhead: the tensor can be made once, or made directly on the device.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    class WeightedLoss(nn.Module):
        def forward(self, pred, target):
            weight = torch.Tensor([0.1] * 10).cuda()
            return nn.functional.nll_loss(pred, target, weight=weight)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    class WeightedLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("weight", torch.full((10,), 0.1), persistent=False)

        def forward(self, pred, target):
            return nn.functional.nll_loss(pred, target, weight=self.weight)
    ```

    ## Fix safety
    A constant scalar is `torch.full((), v, device=d)` or `torch.scalar_tensor(v, device=d)`,
    which fill on the device without a copy (measured), with the dtype `torch.tensor(v)` gives
    (`int64` for an int, the default float dtype for a float, `bool`); `torch.zeros(n, device=d)`
    and `torch.arange(n, device=d)` likewise. A constant tensor is best made once, as a buffer
    registered in `__init__`, which moves with the module's `.to()`. Data that really changes
    every step (a batch) should come from pinned memory with `.to(device, non_blocking=True)`.

    Autofix: `torch.tensor(0.5, device=d)` and `torch.tensor(0.5).to(d)` become
    `torch.full((), 0.5, device=d)` (safe, `--fix`). With `--unsafe-fixes`, a constant made from
    literals in a `forward` (`torch.tensor([1.0, 2.0]).cuda()`, `torch.tensor([1.0, 2.0], device=d)`)
    becomes `self.<name>_const`, registered in `__init__` with `persistent=False` (the state dict
    is unchanged; `__init__` is created when missing). Unsafe: the buffer follows the module's
    device and dtype (`model.half()` converts it), not the `device=` written in the call.
    Any other copy of a CPU tensor to the GPU (`.cuda()`, `.to(device)`, `.to("cuda")`: a
    destination that names a device) gets `non_blocking=True` (unsafe: it only overlaps from
    pinned memory, and a large pageable tensor still blocks). `torch.tensor(data, device=d)` of
    non-literal data is not rewritten: it still copies from the host.

    ## Known problems
    Not reported in cold code (`__init__`, module level, set-up methods): a copy made once costs
    nothing per step. Reported in code of unknown temperature too: on torchvision 0.26, hot-only
    reporting missed 11 measured syncs in transforms and optical flow that this catches at no loss
    of precision (bench/score_corpus.py). `.cuda()` of
    a value inference cannot place is not reported (it may already be on the GPU); a copy with
    `non_blocking=True` is not reported, although a *large pageable* tensor still blocks.
    `.to(device)` with a device inference cannot resolve is taken to mean the GPU. Data with no
    element is not reported: `torch.tensor([], device=d)`, `torch.empty(0).to(d)`, and a list
    the surrounding test found empty (`torch.stack(b) if len(b) > 0 else torch.tensor(b, device=d)`).
    An attribute that `__init__` sets to a CPU tensor and another method reassigns (a scheduler's
    `set_timesteps(device)`) is reported where it is copied: it is on the host whenever that
    method has not run (measured on diffusers' flow-matching training step). `self.buf.copy_(cpu)`
    in `__init__` is not reported: the module being built holds its buffers on the host unless a
    `device=` argument placed them (timm's blur and DCT filters).

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: the host
    waits for the sleep; `set_sync_debug_mode("warn")` reports the host-to-device copy.

    ## References
    - https://pytorch.org/docs/stable/notes/cuda.html#use-pinned-memory-buffers
    - https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_buffer
    - seeds/000 (weighted NLL loss), DESIGN.md section 4
    """

    code = "TSL202"
    name = "host-tensor-to-device"
    message = (
        "a tensor built from host data is copied to the GPU every step, and the copy waits for the GPU; "
        "register it as a buffer in `__init__`, or create it on the device (`torch.full(..., device=)`, "
        "`torch.scalar_tensor(v, device=)`)"
    )
    hot_only = False

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._empty = EmptyBranches()

    def visit_If(self, node: cst.If) -> None:
        self._empty.note(node.test, node.body, node.orelse)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._empty.note(node.test, node.body, node.orelse)

    def visit_Call(self, node: cst.Call) -> None:
        q = self.ctx.qualname(node.func)
        if q is not None and (q in api.HOST_DATA_FACTORIES or q in CUDA_TYPED or q == "torch.where"):
            if q in api.HOST_DATA_FACTORIES and self._host_data_on_device(node):
                self.report(node, fix=self._fix_factory(node, q))
            elif q in CUDA_TYPED and self._data_kind(node) in (LIST, TUPLE, NDARRAY):
                self.report(node)
            elif q == "torch.where" and len(node.args) == 3:
                self._where_operands([a.value for a in node.args])
            return
        if q is not None and self.ctx.tensor_method(node) is None:
            return  # a function, not a method of another file's value (`consts.MEAN.to(d)`)
        f = node.func
        if (type(f) is cst.Attribute and f.attr.value in ("to", "cuda") and not non_blocking(node)
                and gathered_by_host_index(self.ctx, f.value) and not sliced_per_step(self.ctx, f.value)
                and (f.attr.value == "cuda" or names_a_gpu_device(self.ctx, node))):
            self.report(node, GATHER_MESSAGE)  # `x[idx].to(d)` of an `x` inference cannot place
            return
        method = self.ctx.tensor_method(node)
        if method == "where" and len(node.args) == 2:
            self._where_operands([node.func.value] + [a.value for a in node.args])
        elif method == "new_tensor":
            if self.ctx.value(node.func.value).device != CPU and not self._data_on_device(node):
                self.report(node)
        elif method in ("cuda", "to", "type_as") and not non_blocking(node):
            before = self.ctx.value(node.func.value)
            after = self.ctx.value(node)
            if after.kind != TENSOR or after.device == CPU or no_element_factory(self.ctx, node.func.value):
                return  # `torch.empty(0).to(d)`: no element to copy
            if before.device == CPU:
                # `type_as(gpu_t)` copies like `.to(gpu_t)`, with no non_blocking to offer
                self.report(node, fix=self._fix_copy(node, method) if method != "type_as" else None)
            elif before.cpu_at_init:
                self.report(node, AT_INIT_MESSAGE)
        elif method == "copy_" and node.args and not non_blocking(node) and not self._building_self(node.func.value):
            # `buf.copy_(torch.tensor(True))`: an in-place store of a CPU tensor into a GPU one
            source = self.ctx.value(node.args[0].value)
            if (source.kind == TENSOR and source.device == CPU
                    and not no_element_factory(self.ctx, node.args[0].value)
                    and gpu_tensor_by_evidence(self.ctx.value(node.func.value))):
                self.report(node, STORE_MESSAGE)
        elif method is None and self._runs_per_call() and self._fresh_module_to_device(node):
            self.report(node, MODULE_MESSAGE)

    def visit_Assign(self, node: cst.Assign) -> None:
        """`gpu[:n, t] = cpu_tensor`: the store copies the CPU tensor to the device (measured, a
        0-dim one too: truth rows h2d-28 to h2d-30). Plain indices only (numbers, slices): a
        tensor or sequence index is TSL201/TSL203's."""
        value = self.ctx.value(node.value)
        if not (value.kind == TENSOR and value.device == CPU):
            return
        for target in node.targets:
            t = target.target
            if type(t) is not cst.Subscript:
                continue
            base = self.ctx.value(t.value)
            if (base.kind == TENSOR and gpu_tensor_by_evidence(base)
                    and all(v is SLICE or v.kind == NUMBER for v in positions(self.ctx, t))):
                self.report(node.value, STORE_MESSAGE)
                return

    def _building_self(self, expr: cst.BaseExpression) -> bool:
        """``self.filt.copy_(...)`` in ``__init__``: a buffer of the module being built, on the CPU
        unless a ``device=`` argument put it elsewhere (filled once, before any move)."""
        fn = self.ctx.function
        return fn is not None and fn.name == "__init__" and on_self(expr)

    def _runs_per_call(self) -> bool:
        """Where a module built on the spot is rebuilt over and over: a training loop, or the
        per-call method of a module or transform. `model = Net().to(device)` in a set-up or
        `main` function runs once and is not reported."""
        func = self.ctx.function
        return self.ctx.in_hot_loop or (func is not None and func.cls is not None
                                        and func.name in ("forward", "__call__"))

    def _fresh_module_to_device(self, call: cst.Call) -> bool:
        """``Filter(...).to(device)`` / ``.cuda()``: a module made on the CPU right here, whose
        parameters and buffers are copied to the GPU each time the line runs."""
        func = call.func
        if not (type(func) is cst.Attribute and func.attr.value in ("to", "cuda")
                and type(func.value) is cst.Call and not non_blocking(call)):
            return False
        module = self.ctx.value(func.value)
        if module.kind != MODULE or module.cls in torch_facts.stateless_modules():
            return False  # `nn.ReLU().to(d)`: nothing to copy (measured: no sync)
        return func.attr.value == "cuda" or names_a_gpu_device(self.ctx, call)

    # -- fixes ---------------------------------------------------------------------------------
    def _fix_factory(self, call: cst.Call, q: str):
        """`torch.tensor(0.5, device=d)` -> `torch.full((), 0.5, device=d)`; a literal list with
        `device=` -> a buffer made once in `__init__` (without `device=`: it moves with the module)."""
        positional = [a for a in call.args if a.keyword is None]
        if q not in SCALAR_FACTORIES or len(positional) != 1 or call.args[0].keyword is not None or fx.has_star(call):
            return None
        if fx.keyword(call, "device") is None:
            return None
        data = positional[0].value
        if fx.is_scalar_literal(data):
            return self._full(call, data, [a for a in call.args[1:]])
        return self._hoist(call, fx.without_keyword(call, "device"))

    def _fix_copy(self, call: cst.Call, method: str):
        """`.cuda()` / `.to(device)` of a constant: made once in `__init__` (or filled on the
        device when it is a scalar); of anything else: `non_blocking=True`."""
        if fx.has_star(call):
            return None
        receiver = call.func.value
        device = self._device_only(call, method)
        if device is not None and fx.is_constant(receiver, fx.torch_aliases(self.ctx)):
            scalar = self._scalar_factory(receiver)
            if scalar is not None:
                factory, data = scalar
                extra = [a for a in factory.args[1:] if a.keyword is not None and a.keyword.value != "device"]
                return self._full(call, data, extra, device)
            hoisted = self._hoist(call, receiver)
            if hoisted is not None:
                return hoisted
        if any(a.keyword is None for a in call.args[1:]):
            return None  # to(device, dtype, non_blocking) spelled positionally: leave it
        if method == "to" and not names_a_gpu_device(self.ctx, call):
            return None  # `.to(x)` with an `x` inference cannot place: perhaps a dtype
        return fx.make(fx.UNSAFE, "copy with `non_blocking=True` (needs pinned memory to overlap)", call,
                       fx.with_keyword(call, "non_blocking", "True"))

    def _device_only(self, call: cst.Call, method: str):
        """The device a `.cuda()` / `.to()` call moves to (code), when that is all it does."""
        if method == "cuda":
            if not call.args:
                return '"cuda"'
            device = arg(call, 0, "device")
            return fx.code(device.value) if device is not None and len(call.args) == 1 else None
        if len(call.args) != 1:
            return None
        a = call.args[0]
        if a.keyword is not None and a.keyword.value != "device":
            return None
        return fx.code(a.value) if self.ctx.value(a.value).kind in (DEVICE, STR, UNKNOWN) else None

    def _scalar_factory(self, expr):
        if type(expr) is cst.Call and self.ctx.qualname(expr.func) in SCALAR_FACTORIES and expr.args:
            first = expr.args[0]
            if first.keyword is None and not first.star and fx.is_scalar_literal(first.value) and all(
                    a.keyword is not None for a in expr.args[1:]):
                return expr, first.value
        return None

    def _full(self, call: cst.Call, data, keywords, device=None):
        torch, imports = fx.torch_name(self.ctx)
        parts = ["()", fx.code(data)] + [fx.arg_code(a) for a in keywords]
        if device is not None:
            parts.append(f"device={device}")
        return fx.make(fx.SAFE, "fill the scalar on the device: `torch.full((), v, device=d)`", call,
                       f"{torch}.full({', '.join(parts)})", imports)

    def _hoist(self, call: cst.Call, constant: cst.BaseExpression):
        cls = fx.module_method(self.ctx)
        if cls is None or not fx.is_constant(constant, fx.torch_aliases(self.ctx)):
            return None
        return fx.make(fx.UNSAFE, "build the constant once, as a buffer registered in `__init__`", call,
                       "", hoist=fx.Hoist(fx.code(constant), fx.init_params(cls)))

    def _where_operands(self, operands) -> None:
        """`torch.where` copies a CPU tensor operand next to GPU ones (even a 0-dim one, measured)."""
        values = [self.ctx.value(e) for e in operands]
        if any(v.maybe_gpu for v in values):
            for e, v in zip(operands, values):
                if v.kind == TENSOR and v.device == CPU:
                    self.report(e, WHERE_MESSAGE)

    def _host_data_on_device(self, call: cst.Call) -> bool:
        data = arg(call, 0, "data")
        if data is not None and (empty_literal(data.value) or self._empty.is_empty(
                data.value, sequence=self.ctx.value(data.value).kind in (LIST, TUPLE))):
            return False  # `torch.tensor([], device=d)`, or of a list a test found empty: no data to copy
        made = self.ctx.value(call)
        return made.kind == TENSOR and made.device != CPU and not self._data_on_device(call)

    def _data_on_device(self, call: cst.Call) -> bool:
        """The data argument is already a tensor that may be on the GPU: no host copy. Not one
        annotated "numpy array or tensor" (`obs: np.ndarray | torch.Tensor`): converting what
        may be a numpy array is what the call is there for."""
        data = arg(call, 0, "data")
        v = self.ctx.value(data.value) if data is not None else None
        return v is not None and v.kind == TENSOR and v.device != CPU and not (
            v.arraylike and self._annotated_param(data.value))

    def _annotated_param(self, expr: cst.BaseExpression) -> bool:
        """A parameter of this function with an annotation of its own (`obs: np.ndarray | Tensor`):
        what the function says it converts. A value that is "array or tensor" only through its
        callers (array-agnostic helpers passing `NdarrayOrTensor` on) is the callers' tensor."""
        func = self.ctx.function
        if func is None or type(expr) is not cst.Name:
            return False
        param = param_named(func.node, expr.value)
        return param is not None and param.annotation is not None

    def _data_kind(self, call: cst.Call) -> Optional[str]:
        data = arg(call, 0)
        return self.ctx.value(data.value).kind if data is not None else None
