"""TSL409 metric-sync."""

from typing import List, Optional, Tuple

import libcst as cst

from torchsync_lint.catalog import training_utils as data
from torchsync_lint.inference.training_utils import is_collection, metric_tag
from torchsync_lint.rules.base import Rule

# The metric methods a rule may flag; `reset` was measured never to sync and is not flagged.
METRIC_METHODS = ("update", "forward", "compute")
SYNC_MESSAGE = "`{call}` was measured to make the host wait for the GPU every call ({version}); {advice}"
ALTERNATIVE_MESSAGE = "built with {change} it did not"
UPDATE_ONLY_MESSAGE = "`update` alone did not: call `update` every step and `compute` once per epoch"
UPDATE_ALTERNATIVE_MESSAGE = (
    "built with {change}, `update` alone did not: call `update` every step and `compute` once per epoch"
)
NO_ALTERNATIVE_MESSAGE = "no measured variant avoids it: call it every N steps or once per epoch, outside the step"


def _short(written: str) -> str:
    return written.rsplit(".", 1)[-1]


def _literal(value) -> str:
    return repr(value)


def advice(tag: str, method: str) -> Optional[Tuple[str, Optional[Tuple[str, str]]]]:
    """(the message's advice, the measured (variant tag, method) it names as sync-free) for
    ``method`` of the measured variant ``tag`` when that call synced; None when it did not (or was
    not measured)."""
    if data.syncs(tag, method) is not True:
        return None
    alternatives = data.alternatives(tag, method)
    if alternatives:
        other, change = alternatives[0]
        return ALTERNATIVE_MESSAGE.format(change=_change(change)), (other, method)
    if method in ("forward", "compute"):
        if data.syncs(tag, "update") is False:
            return UPDATE_ONLY_MESSAGE, (tag, "update")
        alternatives = data.alternatives(tag, "update")
        if alternatives:
            other, change = alternatives[0]
            return UPDATE_ALTERNATIVE_MESSAGE.format(change=_change(change)), (other, "update")
    return NO_ALTERNATIVE_MESSAGE, None


def _change(change) -> str:
    return ", ".join(f"`{k}={_literal(v)}`" for k, v in sorted(change.items()))


def collection_syncs(member_tags: List[Optional[str]], method: str) -> Optional[bool]:
    """A MetricCollection's ``method`` runs its members' (measured: it synced exactly when a member's did)."""
    verdicts = [None if t is None else data.syncs(t, method) for t in member_tags]
    if any(v is True for v in verdicts):
        return True
    return False if verdicts and all(v is False for v in verdicts) else None


class MetricSync(Rule):
    """
    ## What it does
    Flags calls of torchmetrics metric objects in hot code (a training step, `forward`, a training
    loop) that were measured on a GPU to make the host wait: `metric.update(preds, target)`,
    `metric(preds, target)` (forward) and `metric.compute()`, for metrics built in this or another
    file (`self.acc = torchmetrics.Accuracy(task="multiclass", num_classes=10)`,
    `MulticlassAccuracy(num_classes=10)`, `MeanMetric()`, a `MetricCollection` of them). The answer
    depends on the constructor's arguments, and the message names the measured argument change that
    removes the sync, where one exists.

    ## Why is this bad?
    Many metrics check their input on the host: the aggregation metrics (`MeanMetric`, `SumMetric`,
    `MaxMetric`, `MinMetric`, `CatMetric`, `RunningMean`) ask `torch.isnan(x).any()` on every update
    unless `nan_strategy="disable"`; binary classification metrics validate their input unless
    `validate_args=False`; multiclass `average="macro"` (the default of `MulticlassAccuracy`,
    `MulticlassF1Score`...) counts classes with `torch.bincount`, which reads the size of its result
    back; `forward` and `compute` of `AUROC`, `R2Score` and `PearsonCorrCoef` compute on the host's
    schedule. Each is a pipeline drain in every step.

    ## Example
    ```python
    import torch.nn.functional as F
    import torchmetrics
    from lightning import LightningModule


    class Model(LightningModule):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.train_loss = torchmetrics.MeanMetric()
            self.train_acc = torchmetrics.classification.MulticlassAccuracy(num_classes=10)

        def training_step(self, batch, batch_idx):
            x, y = batch
            logits = self.net(x)
            loss = F.cross_entropy(logits, y)
            self.train_loss.update(loss)
            self.train_acc.update(logits, y)
            return loss
    ```

    ## Use instead
    ```python
    import torch.nn.functional as F
    import torchmetrics
    from lightning import LightningModule


    class Model(LightningModule):
        def __init__(self, net):
            super().__init__()
            self.net = net
            self.train_loss = torchmetrics.MeanMetric(nan_strategy="disable")
            self.train_acc = torchmetrics.classification.MulticlassAccuracy(num_classes=10, average="micro")

        def training_step(self, batch, batch_idx):
            x, y = batch
            logits = self.net(x)
            loss = F.cross_entropy(logits, y)
            self.train_loss.update(loss)
            self.train_acc.update(logits, y)
            return loss

        def on_train_epoch_end(self):
            self.log("train_acc", self.train_acc.compute())  # once per epoch
    ```

    ## Fix safety
    Unsafe: `nan_strategy="disable"` lets a NaN into the aggregate instead of an error or a warning;
    `validate_args=False` drops the input checks; `average="micro"` is a different number than the
    macro average. Where no measured variant avoids the sync (`ConfusionMatrix`), call the metric
    every N steps, or once per epoch on predictions kept on the GPU.

    ## Known problems
    Only metrics whose constructor inference can see are recognised (built in `__init__`, in the
    function, or returned by a helper of the linted project), and only the measured classes; a
    project subclass of a measured class, or a metric built with an argument that is no literal or
    an argument combination that was not measured, is not reported. Inputs were float predictions
    (logits or probabilities); with integer class predictions the input validation of multiclass
    metrics also synced (`average="micro"` needed `validate_args=False` too). Distributed switches
    (`sync_on_compute`, `dist_sync_on_step`) could not be measured on one GPU: they add gathers
    under a process group. `compute` at the end of an epoch is not hot and not reported.

    ## Verify
    `python bench/measure_training_utils.py` on an H100 (torch 2.11, torchmetrics 1.9.0): each
    method ran after a queued 20 ms `torch.cuda._sleep`; a call that synced held the host for the
    whole sleep, and `set_sync_debug_mode("warn")` agreed on every call. Data:
    `torchsync_lint/catalog/data/training_utils.json`, checked against this rule by
    `tests/test_training_utils_data.py`.

    ## References
    - https://lightning.ai/docs/torchmetrics/stable/pages/overview.html
    - https://lightning.ai/docs/torchmetrics/stable/aggregation/mean.html
    """

    code = "TSL409"
    name = "metric-sync"
    message = "a torchmetrics call measured to make the host wait for the GPU every step"
    hot_only = True

    def visit_Call(self, node: cst.Call) -> None:
        f = node.func
        if type(f) is cst.Attribute and f.attr.value in METRIC_METHODS:
            method, receiver = f.attr.value, f.value
        elif type(f) in (cst.Name, cst.Attribute):
            method, receiver = "forward", f  # metric(preds, target)
        else:
            return
        v = self.ctx.value(receiver)
        if is_collection(v):
            self._collection(node, v, method)
            return
        tag = metric_tag(v)
        if tag is None:
            return
        got = advice(tag, method)
        if got is not None:
            call = f"{_short(tag.split('|')[0])}.{method}"
            self.report(node, SYNC_MESSAGE.format(call=call, version=_version(), advice=got[0]))

    def _collection(self, node: cst.Call, v, method: str) -> None:
        tags = [metric_tag(m) for m in v.elts]
        if collection_syncs(tags, method) is not True:
            return
        syncing = [t for t in tags if t is not None and data.syncs(t, method)]
        parts = []
        for t in syncing:
            got = advice(t, method)
            parts.append(f"`{_short(t.split('|')[0])}`: {got[0]}" if got else f"`{_short(t.split('|')[0])}`")
        self.report(node, SYNC_MESSAGE.format(call=f"MetricCollection.{method}", version=_version(),
                                              advice="its members sync: " + "; ".join(parts)))


def _version() -> str:
    env = data.environment()
    return f"torchmetrics {env.get('torchmetrics')}, {env.get('gpu')}"
