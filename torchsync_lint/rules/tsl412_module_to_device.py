"""TSL412 module-to-device."""

import libcst as cst

from torchsync_lint.inference import torch_facts
from torchsync_lint.inference.switches import method_defined
from torchsync_lint.inference.values import MODULE, SELF, UNKNOWN
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import names_a_gpu_device, non_blocking, on_self

# methods that run every call of a module: a `.to()` there is a no-op once the module is moved
PER_CALL = frozenset(("forward", "__call__"))


class ModuleToDevice(Rule):
    """
    ## What it does
    Flags moving a module held in a variable or attribute to the GPU (`model.to(device)`,
    `self.to(device)` in a module's own method, `model.cuda()`; `self.model = build(cfg).to(device)`
    where a method of the class uses `self.model` as only a module is used, `self.model.parameters()`;
    `model.to(device)` as a statement whose result is unused: only a module moves in place; a name the
    function also calls, `model(x)`: no tensor is callable)
    outside the per-step code: in
    set-up code (a constructor, a `load` or `build` helper, a pipeline's preparation) it copies
    every parameter and buffer the module holds on the host to the GPU, one blocking copy each.

    ## Why is this bad?
    Each copy from pageable host memory waits for all queued kernels: the GPU drains before the
    model has even started (measured on an H100: a CPU `nn.Linear` moved with `.to(d)` syncs).
    It runs once per model, so it is only shown with `--include-cold`, labelled: it tells where
    set-up time goes and which syncs a trace of the first step will show.

    ## Example
    ```python
    import torch.nn as nn


    class Tagger(nn.Module):
        def __init__(self, device):
            super().__init__()
            self.lin = nn.Linear(8, 8)
            self.to(device)
    ```

    ## Use instead
    ```python
    import torch.nn as nn


    class Tagger(nn.Module):
        def __init__(self, device):
            super().__init__()
            self.lin = nn.Linear(8, 8, device=device)  # made on the device: nothing to copy
    ```

    ## Fix safety
    Not automatic: build the layers on the device (`device=` on each layer, or
    `torch.device(d)` as a context manager around the construction), or load the weights with
    `map_location=d` into a model made on the device.

    ## Known problems
    Reported only outside hot code (a training loop, what it calls every step) and outside
    `forward` / `__call__`: there the module is on the device after the first step, and the call
    copies nothing. `self.to(d)` and `self.sub.to(d)` are reported in `__init__` only: in another
    method (`encode`, `fit`) they run on every call, and copy only on the first. So it is shown with `--include-cold` only, labelled. A module built and moved
    in one expression in per-step code is TSL202's; in set-up code (`self.actor =
    Actor(...).to(device)`) it is reported here. A module whose parameters were made on the
    device already copies nothing and is reported all the same.

    ## Verify
    Truth table rows h2d-25 (a module made on the CPU, moved: synced) and h2d-32 (a module on
    the device already, moved again: nothing copied).

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to
    - https://pytorch.org/tutorials/prototype/skip_param_init.html
    """

    code = "TSL412"
    name = "module-to-device"
    message = (
        "moving this module to the GPU copies each of its parameters and buffers from the host, one "
        "blocking copy each; build its layers on the device (`device=`), or load the weights into a "
        "model made there"
    )
    cold_only = True

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._bound_to: dict = {}  # id() of an assigned call -> its one target
        self._discarded: set = set()  # id() of calls made as statements, their result unused

    def visit_Expr(self, node: cst.Expr) -> None:
        if type(node.value) is cst.Call:
            self._discarded.add(id(node.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        # `self.model = build(cfg).to(d)`: the attribute (or name) it is bound to is used as a
        # module elsewhere (`self.model.parameters()`): what is moved is a module
        if len(node.targets) == 1 and type(node.value) is cst.Call:
            self._bound_to[id(node.value)] = node.targets[0].target

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (type(func) is cst.Attribute and func.attr.value in ("to", "cuda")) or non_blocking(node):
            return
        if type(func.value) is cst.Call and self.ctx.in_hot_loop:
            return  # `Net().to(d)` built in a training loop: TSL202's
        if self.ctx.function is not None and self.ctx.function.name in PER_CALL:
            return  # moved already after the first call: nothing to copy (a hot one is dropped anyway)
        if func.attr.value == "to" and not names_a_gpu_device(self.ctx, node):
            return
        if on_self(func.value) and (self.ctx.function is None or self.ctx.function.name != "__init__"):
            # `self.to(d)` / `self.sub.to(d)` in another method (an `encode`, a `train`) runs on
            # every call: the module is on the device after the first (sentence-transformers)
            return
        if (self._is_module(func.value) or self._bound_to_module(node) or self._moved_in_place(node)
                or self._called_and_moved(func.value)):
            self.report(node)

    def _called_and_moved(self, expr: cst.BaseExpression) -> bool:
        """``model = model.to(d)`` where the function also calls ``model(x)``: no tensor is
        callable, so what is called and moved is a module (a pipeline of modules)."""
        f = self.ctx.function
        if type(expr) is not cst.Name or f is None or self.ctx.value(expr).kind != UNKNOWN:
            return False
        sites = self.ctx.evaluator.index.call_sites.get(expr.value, ())
        return any(s.caller is f for s in sites)

    def _moved_in_place(self, node: cst.Call) -> bool:
        """``model.to(device)`` as a statement, its result unused, on a value inference cannot
        type: only a module moves in place (a tensor's copy, dropped, would do nothing)."""
        if id(node) not in self._discarded:
            return False
        v = self.ctx.value(node.func.value)
        if v.kind != UNKNOWN or v.ref is not None:
            return False
        # unless a class of the project has a method of that name (a normaliser's own `cuda()`,
        # whose copies are its body's statements)
        return not method_defined(self.ctx.evaluator, node.func.attr.value)

    def _bound_to_module(self, node: cst.Call) -> bool:
        target = self._bound_to.get(id(node))
        f = self.ctx.function
        if target is None or f is None or self.ctx.value(node.func.value).kind != UNKNOWN:
            return False
        if on_self(target) and type(target) is cst.Attribute:
            return f.cls is not None and target.attr.value in f.cls.module_attrs
        return type(target) is cst.Name and target.value in f.module_uses

    def _is_module(self, expr: cst.BaseExpression) -> bool:
        v = self.ctx.value(expr)
        if v.kind == MODULE:
            return v.cls not in torch_facts.stateless_modules()  # `nn.ReLU()` has nothing to copy
        if v.kind == SELF:
            cls = self.ctx.function.cls if self.ctx.function is not None else None
            return cls is not None and self.ctx.evaluator.is_module_class(cls)
        return False
