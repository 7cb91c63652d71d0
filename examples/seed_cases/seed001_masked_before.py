# Copy of ../shared/cases/seed001_masked_before.py (the project's seed cases, from the seed articles named below),
# kept here because only the repository travels to the GPU machine. Do not edit: re-copy.
# MaskedLoss from the seed article on cudaMemcpyAsync events and boolean masks
# (001_d561eb174f7c1b67.txt), as first written.
import torch
import torch.nn as nn
from torch import Tensor


class MaskedLoss(nn.Module):
    def __init__(self, ignore_val=-1, num_classes=10):
        super().__init__()
        self.ignore_val = ignore_val
        self.num_classes = num_classes
        self.loss = torch.nn.CrossEntropyLoss()

    def cross_entropy(self, pred: Tensor, target: Tensor) -> Tensor:
        mask = target != self.ignore_val
        permuted_pred = torch.permute(pred, (0, 2, 3, 1))
        masked_target = target[mask]                                   # EXPECT: bool-mask-index
        masked_pred = permuted_pred[mask.unsqueeze(-1).expand(  # EXPECT: bool-mask-index
            -1, -1, -1, self.num_classes)]
        masked_pred = masked_pred.reshape(-1, self.num_classes)
        loss = self.loss(masked_pred, masked_target)
        return loss

    def ignore_background(self, target: Tensor) -> Tensor:
        inds = torch.nonzero(target == self.num_classes - 1, as_tuple=True)  # EXPECT: nonzero
        target[inds] = self.ignore_val  # EXPECT: index-put-python-scalar (the int is copied to the GPU)
        return target

    def forward(self, pred: Tensor, target: Tensor) -> Tensor:
        target = self.ignore_background(target)
        unique = torch.unique(target)                 # EXPECT: unique
        ignore_loss = torch.numel(unique) < 2
        loss = self.cross_entropy(pred, target)
        if ignore_loss:  # not a sync: torch.numel returns a Python int (the sync happened in torch.unique)
            loss = 0. * loss
        return loss
