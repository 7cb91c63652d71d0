"""TSL112 scripted-function-sync."""

import libcst as cst

from torchsync_lint.inference.index import FunctionInfo
from torchsync_lint.rules.base import Rule

# Decorators that compile a function to TorchScript: its body runs in the TorchScript interpreter.
_SCRIPT_DECORATORS = frozenset(("torch.jit.script",))
# Explicit host reads, found in a scripted body even when the rule that reports them is not
# selected: tensor methods, and conversions of a computed value (TorchScript types every value).
_HOST_READS = frozenset(("item", "tolist", "cpu", "numpy", "nonzero"))
_HOST_CONVERSIONS = frozenset(("bool", "int", "float"))


class ScriptedFunctionSync(Rule):
    """
    ## What it does
    Flags a call of a `@torch.jit.script` function of the same file whose body holds a sync that
    another rule reports (`.item()`, `if tensor:`, `int(t)`, a boolean-mask index...). The
    finding sits on the Python line that calls the scripted function; the sync inside is reported
    where it is written as well.

    ## Why is this bad?
    TorchScript runs the body without Python frames: the host waits inside the interpreter, and
    a profiler, the sync debug mode and a Python stack all point at the line that called the
    scripted function. Compiling a function does not remove its syncs: a `.item()` or a branch on
    a tensor still copies to the host and waits for every queued kernel, at each call.

    ## Example
    ```python
    import torch
    import torch.nn as nn


    @torch.jit.script
    def clipped(x: torch.Tensor) -> torch.Tensor:
        if bool(x.max() > 1.0):
            x = x / x.max()
        return x


    class Head(nn.Module):
        def forward(self, x):
            return clipped(x)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn as nn


    @torch.jit.script
    def clipped(x: torch.Tensor) -> torch.Tensor:
        return x / torch.clamp(x.max(), min=1.0)


    class Head(nn.Module):
        def forward(self, x):
            return clipped(x)
    ```

    ## Fix safety
    No automatic fix: the sync is fixed inside the scripted function (see the finding there).

    ## Known problems
    Only functions decorated in the same file, defined above the call, are followed; a function
    compiled with `f = torch.jit.script(g)`, or scripted modules' methods, are not. The call is
    reported whenever some rule reports a sync in the body, also one on a branch the call may
    not take.

    ## Verify
    The truth recordings attribute a sync inside a scripted function to the Python statement
    that called it (bench/data, the `chain` of each event): that statement is what this rule
    marks.

    ## References
    - https://pytorch.org/docs/stable/jit.html
    - docs/index.md, "How it decides"
    """

    code = "TSL112"
    name = "scripted-function-sync"
    message = ("`{name}` is a TorchScript function whose body waits for the GPU (reported there); the host waits at "
               "this call")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is not cst.Name:
            return
        info = self.ctx.index.module_functions.get(func.value)
        if info is None or not self._scripted(info):
            return
        if self._syncs_inside(info):
            self.report(node, self.message.format(name=func.value))

    def _scripted(self, info: FunctionInfo) -> bool:
        for d in info.node.decorators:
            expr = d.decorator.func if type(d.decorator) is cst.Call else d.decorator
            if self.ctx.qualname(expr) in _SCRIPT_DECORATORS:
                return True
        return False

    def _syncs_inside(self, info: FunctionInfo) -> bool:
        """Another rule reported a sync in the function's body (so far in the walk), or the body
        reads a value on the host explicitly."""
        key = info.key
        if any(raw.rule is not self and raw.function is not None
               and (raw.function == key or raw.function.startswith(key + ".<locals>."))
               for raw in self.ctx.findings):
            return True
        stack = [info.node.body]
        while stack:
            n = stack.pop()
            if type(n) is cst.Call:
                f = n.func
                if type(f) is cst.Attribute and f.attr.value in _HOST_READS:
                    return True
                if (type(f) is cst.Name and f.value in _HOST_CONVERSIONS and len(n.args) == 1
                        and type(n.args[0].value) in (cst.Call, cst.Comparison, cst.Subscript, cst.BinaryOperation)):
                    return True
            stack.extend(n.children)
        return False
