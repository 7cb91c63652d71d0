import torch
from torch import nn


class TaskAlignedAssigner(nn.Module):
    def __init__(self, topk=10):
        super().__init__()
        self.topk = topk

    def forward(self, pred, gt):
        overlaps = pred @ gt.t()
        fg_mask = overlaps > 0.5
        target = overlaps.argmax(-1)
        return fg_mask, target
