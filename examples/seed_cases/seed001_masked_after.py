# Copy of ../shared/cases/seed001_masked_after.py (the project's seed cases, from the seed articles named below),
# kept here because only the repository travels to the GPU machine. Do not edit: re-copy.
# The same loss after the seed article's fixes: no finding expected.
import torch
import torch.nn as nn
from torch import Tensor


class MaskedLoss(nn.Module):
    def __init__(self, ignore_val=-1, num_classes=10):
        super().__init__()
        self.ignore_val = ignore_val
        self.num_classes = num_classes
        self.loss = torch.nn.CrossEntropyLoss(ignore_index=-1)

    def cross_entropy(self, pred: Tensor, target: Tensor) -> Tensor:
        return self.loss(pred, target)

    def ignore_background(self, target: Tensor) -> Tensor:
        target = torch.where(target == self.num_classes - 1,
                             -1 * torch.ones_like(target), target)
        return target

    def forward(self, pred: Tensor, target: Tensor) -> Tensor:
        target = self.ignore_background(target)
        sorted, _ = torch.sort(target.flatten())
        deriv = sorted[1:] - sorted[:-1]
        num_unique = torch.count_nonzero(deriv) + 1
        loss = self.cross_entropy(pred, target)
        loss = torch.where(num_unique < 2, 0. * loss, loss)
        return loss
