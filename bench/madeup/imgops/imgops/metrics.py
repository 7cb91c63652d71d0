import torch
from torch import Tensor


class BinaryStatScores:
    def __init__(self, threshold=0.5, validate_args=True):
        self.threshold = threshold
        self.validate_args = validate_args
        self.tp = self.fp = self.tn = self.fn = 0

    def _format(self, preds: Tensor, target: Tensor):
        if preds.is_floating_point():
            if not torch.all((preds >= 0) * (preds <= 1)):  # SYNC
                preds = preds.sigmoid()
            preds = preds > self.threshold
        return preds.long(), target.long()

    def _validate(self, target: Tensor):
        unique = torch.unique(target)  # SYNC
        if torch.any((unique != 0) & (unique != 1)):  # SYNC
            raise RuntimeError("target must be binary")

    def update(self, preds: Tensor, target: Tensor) -> None:
        if self.validate_args:
            self._validate(target)
        preds, target = self._format(preds, target)
        self.tp = self.tp + ((preds == 1) & (target == 1)).sum()
        self.fp = self.fp + ((preds == 1) & (target == 0)).sum()
        self.tn = self.tn + ((preds == 0) & (target == 0)).sum()
        self.fn = self.fn + ((preds == 0) & (target == 1)).sum()

    def compute(self):
        precision = self.tp / (self.tp + self.fp).clamp(min=1)
        recall = self.tp / (self.tp + self.fn).clamp(min=1)
        return {"precision": precision, "recall": recall, "f1": 2 * precision * recall / (precision + recall + 1e-12)}


def mean_iou(pred: Tensor, target: Tensor, num_classes: int, ignore_index: int = 255) -> Tensor:
    keep = target != ignore_index
    pred, target = pred[keep], target[keep]  # SYNC
    hist = torch.bincount(target * num_classes + pred, minlength=num_classes ** 2)  # SYNC
    hist = hist.reshape(num_classes, num_classes).float()
    iou = hist.diag() / (hist.sum(0) + hist.sum(1) - hist.diag()).clamp(min=1)
    return iou[hist.sum(1) > 0].mean()  # SYNC
