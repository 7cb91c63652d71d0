"""TSL006 tensor-formatting."""

from typing import Set

import libcst as cst

from torchsync_lint.inference.values import STR
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import collect_ids, holds_gpu_tensor, is_thunk

TO_TEXT = frozenset(("builtins.print", "builtins.str", "builtins.repr", "builtins.format", "builtins.ascii"))
# `debug` is left out: off by default, and measured: a disabled level never formats its arguments.
LOG_METHODS = frozenset(("info", "warning", "warn", "error", "exception", "critical", "fatal", "log"))
# Names that hold a `logging` logger by convention (Lightning's `self.log(...)` is not one of them:
# it stores the tensor without formatting it).
LOGGER_NAMES = frozenset(("logger", "log", "LOGGER", "LOG", "_logger", "_LOGGER", "_log", "_LOG"))
LOGGER_ATTRS = frozenset(("logger", "_logger"))
# tqdm formats every value of set_postfix(...) with str().
PROGRESS_METHODS = frozenset(("set_postfix", "set_postfix_str", "set_description", "set_description_str"))


class TensorFormatting(Rule):
    """
    ## What it does
    Flags turning a tensor into text: `print(t)`, `str(t)`, `repr(t)`, `format(t)`, f-strings
    that format a tensor (`f"{loss:.3f}"`), `"%s" % t`, `"{}".format(t)`, `logging` / `logger`
    calls with a tensor argument, and tqdm's `set_postfix(loss=loss)`.

    ## Why is this bad?
    Text lives on the host. Formatting a tensor copies its values to the CPU (a 0-dim tensor via
    `.item()`, larger ones via `.cpu()`), and the copy waits for every kernel queued before it.
    A progress line printed every step turns an asynchronous training loop into a synchronous one.

    ## Example
    ```python
    import torch.nn.functional as F
    from lightning import LightningModule


    class Model(LightningModule):
        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.cross_entropy(self(x), y)
            print(f"step {batch_idx} loss {loss:.4f}")
            return loss
    ```

    ## Use instead
    ```python
    import torch.nn.functional as F
    from lightning import LightningModule


    class Model(LightningModule):
        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.cross_entropy(self(x), y)
            self.log("loss", loss)  # formatted later; or print every N steps, outside the hot path
            return loss
    ```

    ## Fix safety
    Unsafe: the text changes. Keep the tensor (`.detach()`) and format it every N steps or after
    the epoch; metadata (`t.shape`, `t.dtype`, `t.device`, `len(t)`) formats without a sync and is
    not reported. Lightning's `self.log(name, tensor)` does not format on the spot and is not
    reported.

    ## Known problems
    `logging` formats its arguments only when the level is enabled (measured:
    `logging.debug("%s", t)` does not sync with the default level). `debug` calls are not
    reported; `info` and above are, as training scripts usually enable INFO (with INFO off,
    `logger.info("%s", t)` is a false alarm). An f-string argument is formatted before the call
    and is reported at any level. Loggers are recognised by `logging.getLogger(...)` and by the
    usual names (`logger`, `log`, `self.logger`). f-strings in `raise` statements, `assert`
    messages and parameterless lambdas (`torch._check(cond, lambda: f"...")`) run only on
    failure and are not reported. Reported only when inference says the value is a tensor (or a
    list/tuple of tensors) not known to be on the CPU, from more than the convention that
    `forward` inputs are tensors; `print(t.item())` is one finding, TSL001.

    ## Verify
    `torchsync-lint --verify` times the statement after a queued `torch.cuda._sleep`: a sync waits
    for the sleep; `set_sync_debug_mode("warn")` reports the device-to-host `cudaMemcpyAsync`.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.cuda.set_sync_debug_mode.html
    - https://lightning.ai/docs/pytorch/stable/extensions/logging.html
    """

    code = "TSL006"
    name = "tensor-formatting"
    message = (
        "formatting a tensor as text copies it to the host and waits for the GPU; keep it a tensor "
        "and print/log it every N steps or after the epoch (shape/dtype format for free)"
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._error_paths: Set[int] = set()  # nodes of raise statements, assert messages, thunks
        self._logger_names = _module_logger_names(ctx)

    # -- code that runs only on failure --------------------------------------------------------
    def visit_Raise(self, node: cst.Raise) -> None:
        for part in (node.exc, node.cause):
            if part is not None:
                collect_ids(part, self._error_paths)

    def visit_Assert(self, node: cst.Assert) -> None:
        if node.msg is not None:
            collect_ids(node.msg, self._error_paths)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        if is_thunk(node):
            collect_ids(node.body, self._error_paths)

    def _tensor(self, expr: cst.BaseExpression) -> bool:
        # an unannotated forward input is no evidence: `f"{layer_type}_freq"` formats strings too
        return holds_gpu_tensor(self.ctx.value(expr), evidence=True)

    # -- formatting sites ----------------------------------------------------------------------
    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        if id(node) in self._error_paths:
            return
        for part in node.parts:
            if type(part) is cst.FormattedStringExpression and self._tensor(part.expression):
                self.report(part)
                return  # one finding per f-string

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) is not cst.Modulo or id(node) in self._error_paths:
            return
        if self.ctx.value(node.left).kind == STR and self._tensor(node.right):
            self.report(node)

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self._error_paths:
            return
        args = [a for a in node.args if not a.star]
        q = self.ctx.qualname(node.func)
        if q in TO_TEXT:
            if any(a.keyword is None and self._tensor(a.value) for a in args[: None if q == "builtins.print" else 1]):
                self.report(node)
            return
        f = node.func
        if type(f) is not cst.Attribute:
            return
        method = f.attr.value
        if method == "format" and self.ctx.value(f.value).kind == STR:
            if any(self._tensor(a.value) for a in args):
                self.report(node)
        elif method in LOG_METHODS and self._is_logger(f.value, q):
            skip = 1 if method == "log" else 0
            positional = [a for a in args if a.keyword is None]
            if method == "log" and positional and self.ctx.qualname(positional[0].value) == "logging.DEBUG":
                return
            if any(self._tensor(a.value) for a in positional[skip:]):
                self.report(node)
        elif method in PROGRESS_METHODS and q is None:
            if any(self._tensor(a.value) or self._dict_holds_tensor(a.value) for a in args):
                self.report(node)

    def _dict_holds_tensor(self, expr: cst.BaseExpression) -> bool:
        return type(expr) is cst.Dict and any(
            type(el) is cst.DictElement and self._tensor(el.value) for el in expr.elements
        )

    def _is_logger(self, receiver: cst.BaseExpression, q) -> bool:
        if q is not None:  # logging.info(...), or a logger imported by name (loguru's `logger`)
            parts = q.split(".")
            return parts[0] == "logging" or (len(parts) > 2 and parts[-2] in LOGGER_NAMES)
        if type(receiver) is cst.Call:
            return self.ctx.qualname(receiver.func) == "logging.getLogger"
        if type(receiver) is cst.Name:
            return receiver.value in LOGGER_NAMES or receiver.value in self._logger_names
        if type(receiver) is cst.Attribute and type(receiver.value) is cst.Name:
            return receiver.value.value == "self" and receiver.attr.value in LOGGER_ATTRS
        return False


def _module_logger_names(ctx) -> Set[str]:
    """Module-level names bound to ``logging.getLogger(...)``."""
    names = set()
    for binding in ctx.index.module_bindings:
        if binding[0] != "assign" or type(binding[2]) is not cst.Call:
            continue
        if ctx.qualname(binding[2].func) in ("logging.getLogger", "logging.get_logger"):
            names.update(t.value for t in binding[1] if type(t) is cst.Name)
    return names
