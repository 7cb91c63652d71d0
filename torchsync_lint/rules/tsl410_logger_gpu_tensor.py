"""TSL410 logger-gpu-tensor."""

from typing import Optional

import libcst as cst

from torchsync_lint.catalog import training_utils as data
from torchsync_lint.inference.values import DICT, OBJECT, SELF, UNKNOWN
from torchsync_lint.rules.base import Rule
from torchsync_lint.rules._common import arg, holds_gpu_tensor, is_true, number_literal

# Lightning's module classes, by the names user code imports them by.
LIGHTNING_MODULES = frozenset((
    "lightning.LightningModule", "lightning.pytorch.LightningModule", "lightning.pytorch.core.LightningModule",
    "lightning.pytorch.core.module.LightningModule", "pytorch_lightning.LightningModule",
    "pytorch_lightning.core.LightningModule", "pytorch_lightning.core.module.LightningModule",
))
# self.log / self.log_dict: the logged value's (position, keyword), and the measured rows of
# bench/measure_training_utils.py (with prog_bar=True: synced every step; without: did not).
LIGHTNING_LOG = {
    "log": ((1, "value"), "log:prog_bar", "log"),
    "log_dict": ((0, "dictionary"), "log_dict:prog_bar", "log_dict"),
}
LOGGER_MESSAGE = (
    "`{method}` of a GPU tensor copies it to the host and waits for the GPU (measured; a Python float "
    "did not); accumulate `loss.detach()` on the GPU and log it every N steps"
)
TRAINER_MESSAGE = (
    "`Trainer(log_every_n_steps={n})`: the logger converts every `self.log`ged tensor to a Python number "
    "after every step, so each step waits for the GPU (measured; with the default of 50 it did not); "
    "log every 50 steps or more"
)
PROG_BAR_MESSAGE = (
    "`self.{method}(..., prog_bar=True)` of a GPU tensor: Lightning reads it on the host for the "
    "progress bar every step (measured); without `prog_bar=True` the logger reads it every "
    "`log_every_n_steps` only"
)


class LoggerGpuTensor(Rule):
    """
    ## What it does
    Flags logging a GPU tensor through a logger that reads it on the host on the spot:
    TensorBoard's `SummaryWriter.add_scalar` / `add_scalars` / `add_histogram`, Lightning's
    `TensorBoardLogger.log_metrics`, Lightning's `self.log(name, tensor, prog_bar=True)` /
    `self.log_dict(..., prog_bar=True)` in a `LightningModule`, and a Lightning
    `Trainer(log_every_n_steps=1)`, which makes the logger read every logged tensor after every step.

    ## Why is this bad?
    TensorBoard writes numbers: `add_scalar(tag, loss, step)` turns the tensor into a NumPy value
    (`.cpu().numpy()`), and the copy waits for every kernel queued before it, each time it is
    called. Lightning's `self.log` keeps the tensor and converts it only when the logger writes
    (every `log_every_n_steps`), but a value shown in the progress bar (`prog_bar=True`) is
    converted with `.item()` after every step, even when the progress bar is turned off.

    ## Example
    ```python
    import torch.nn.functional as F
    from torch.utils.tensorboard import SummaryWriter


    def train(model, loader, opt):
        writer = SummaryWriter()
        for step, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            writer.add_scalar("loss", loss, step)
    ```

    ## Use instead
    ```python
    import torch
    import torch.nn.functional as F
    from torch.utils.tensorboard import SummaryWriter


    def train(model, loader, opt, every=100):
        writer = SummaryWriter()
        running = torch.zeros((), device="cuda")
        for step, (x, y) in enumerate(loader):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            running += loss.detach()
            if step % every == every - 1:  # one sync per `every` steps
                writer.add_scalar("loss", running.item() / every, step)
                running.zero_()
    ```

    ## Fix safety
    Unsafe: what is logged, and how often, changes. In Lightning, drop `prog_bar=True` for values
    that need not be on the progress bar, or show them every N steps.

    ## Known problems
    Loggers inference sees being built (`SummaryWriter(...)`, `TensorBoardLogger(...)`, in
    the function or as a `self.` attribute, or returned by a helper of the project), and a value of
    unknown type whose `add_scalar` / `add_scalars` / `add_histogram` is called (a writer passed
    in: SummaryWriter's method names, read by name; `log_metrics` is too common a name); Lightning's
    `self.logger.experiment.add_scalar(...)` is not recognised. A logged value must be a tensor by
    evidence (a forward input by convention only is not reported). `Trainer(log_every_n_steps=N)` is
    reported for the N measured to make every step wait (1), given as a literal; other values of N
    were not measured (a larger N reads the values every N steps), and whether the module logs a GPU
    tensor at all is not checked. A `Trainer` built in code that runs once (module level, `setup`)
    is labelled cold and shown with `--include-cold`. `sync_dist=True` could not be measured on one
    GPU. `print` and f-strings of tensors are TSL006.

    ## Verify
    `python bench/measure_training_utils.py` on an H100 (torch 2.11, tensorboard 2.21, lightning
    2.6): `add_scalar("loss", cuda_loss, 1)` waited for a queued 20 ms sleep, `add_scalar("loss",
    0.5, 1)` did not; in a `Trainer.fit`, with a 100 ms sleep queued in `training_step`, the host
    waited before the next step with `prog_bar=True` and did not with a plain `self.log`; with
    `Trainer(log_every_n_steps=1)` a plain `self.log` waited after every step, with 50 it did not. Data:
    `torchsync_lint/catalog/data/training_utils.json`.

    ## References
    - https://pytorch.org/docs/stable/tensorboard.html
    - https://lightning.ai/docs/pytorch/stable/extensions/logging.html
    """

    code = "TSL410"
    name = "logger-gpu-tensor"
    message = LOGGER_MESSAGE

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if type(f) is not cst.Attribute or f.attr.value == "Trainer":
            if self.ctx.qualname(f) in data.LIGHTNING_TRAINERS:
                self._trainer(node)
            return
        method = f.attr.value
        if method in data.LOGGER_VALUE_ARGS:
            self._logger_call(node, method, f.value)
        elif method in LIGHTNING_LOG:
            self._lightning_log(node, method, f.value)

    def _trainer(self, node: cst.Call) -> None:
        """``Trainer(log_every_n_steps=N)`` with a literal N measured to make every step wait."""
        given = arg(node, None, "log_every_n_steps")
        n = number_literal(given.value) if given is not None else None
        if n is not None and n == int(n) and data.trainer_log_every_n_steps().get(int(n)) is True:
            self.report(node, TRAINER_MESSAGE.format(n=int(n)))

    def _logger_call(self, node: cst.Call, method: str, receiver: cst.BaseExpression) -> None:
        v = self.ctx.value(receiver)
        if v.kind == OBJECT and v.cls is not None:
            cls = v.cls
        elif v.kind == UNKNOWN and method in data.writer_methods():
            # a writer handed in (`def train(..., writer)`): `add_scalar(tag, value, step)` is
            # TensorBoard's SummaryWriter interface (tensorboardX copies it), read by its name
            cls = data.SUMMARY_WRITER
        else:
            return
        verdict = data.logger_methods().get(cls, {}).get(method)
        if verdict is None or verdict[0] is not True:
            return
        position, keyword = data.LOGGER_VALUE_ARGS[method]
        a = arg(node, position, keyword)
        if a is not None and self._gpu(a.value):
            self.report(node, LOGGER_MESSAGE.format(method=method))

    def _lightning_log(self, node: cst.Call, method: str, receiver: cst.BaseExpression) -> None:
        if self.ctx.value(receiver).kind != SELF or not self._in_lightning_module():
            return
        prog_bar = arg(node, None, "prog_bar")
        if prog_bar is None or not is_true(prog_bar.value):
            return
        (position, keyword), _, _ = LIGHTNING_LOG[method]
        a = arg(node, position, keyword)
        if a is not None and self._gpu(a.value):
            self.report(node, PROG_BAR_MESSAGE.format(method=method))

    def _gpu(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is cst.Dict:
            return any(type(el) is cst.DictElement and self._gpu(el.value) for el in expr.elements)
        v = self.ctx.value(expr)
        if v.kind == DICT:
            return v.item is not None and holds_gpu_tensor(v.item, evidence=True)
        return holds_gpu_tensor(v, evidence=True)

    def _in_lightning_module(self) -> bool:
        func = self.ctx.function
        while func is not None and func.cls is None:
            func = func.parent
        return func is not None and self._lightning_class(func.cls.bases, 0)

    def _lightning_class(self, bases, depth: int) -> bool:
        if depth > 8:
            return False
        for base in bases:
            if base in LIGHTNING_MODULES:
                return True
            local: Optional[object] = self.ctx.index.classes.get(base)
            if local is not None and self._lightning_class(local.bases, depth + 1):
                return True
        return False
