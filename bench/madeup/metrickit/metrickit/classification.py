import torch

from .base import Metric, dim_zero_cat


def _check_same_shape(preds, target):
    if preds.shape != target.shape:
        raise RuntimeError("shape mismatch")


def _input_format(preds, target, threshold=0.5, num_classes=None):
    if preds.is_floating_point():
        if not torch.all((preds >= 0) & (preds <= 1)):  # SYNC
            preds = preds.sigmoid()
        preds = (preds > threshold).long()
    if num_classes is None:
        num_classes = int(max(preds.max(), target.max())) + 1  # SYNC
    return preds, target, num_classes


def _bincount(x, minlength):
    return torch.bincount(x, minlength=minlength)  # SYNC


class Accuracy(Metric):
    def __init__(self, threshold=0.5):
        super().__init__()
        self.threshold = threshold
        self.add_state("correct", torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("total", torch.tensor(0), dist_reduce_fx="sum")

    def update(self, preds, target):
        _check_same_shape(preds, target)
        preds, target, _ = _input_format(preds, target, self.threshold, num_classes=2)
        self.correct += torch.sum(preds == target)
        self.total += target.numel()

    def compute(self):
        return self.correct.float() / self.total


class ConfusionMatrix(Metric):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes
        self.add_state("confmat", torch.zeros(num_classes, num_classes, dtype=torch.long))

    def update(self, preds, target):
        preds, target, _ = _input_format(preds, target, num_classes=self.num_classes)
        unique_mapping = (target.view(-1) * self.num_classes + preds.view(-1)).to(torch.long)
        bins = _bincount(unique_mapping, minlength=self.num_classes ** 2)
        self.confmat += bins.reshape(self.num_classes, self.num_classes)

    def compute(self):
        return self.confmat


class AUROC(Metric):
    def __init__(self, max_fpr=None):
        super().__init__()
        self.max_fpr = max_fpr
        self.add_state("preds", default=[], dist_reduce_fx="cat")
        self.add_state("target", default=[], dist_reduce_fx="cat")

    def update(self, preds, target):
        self.preds.append(preds)
        self.target.append(target)

    def compute(self):
        preds = dim_zero_cat(self.preds)
        target = dim_zero_cat(self.target)
        if not ((target == 0) | (target == 1)).all():  # SYNC
            raise ValueError("binary targets expected")
        desc = torch.argsort(preds, descending=True)
        preds, target = preds[desc], target[desc]
        distinct = torch.where(preds[1:] - preds[:-1])[0]  # SYNC
        threshold_idxs = torch.cat([distinct, torch.tensor([target.numel() - 1], device=target.device)])  # SYNC
        tps = torch.cumsum(target, dim=0)[threshold_idxs]
        fps = 1 + threshold_idxs - tps
        if tps[-1] <= 0:  # SYNC
            return torch.tensor(0.0, device=preds.device)  # SYNC
        tpr = tps / tps[-1]
        fpr = fps / fps[-1]
        return torch.trapz(tpr, fpr)
