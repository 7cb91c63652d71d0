"""Base classes whose parameters only their subclasses' ``super().<method>(...)`` calls fill
(here and in another file)."""

import torch
from torch import nn


class Table(nn.Module):
    def __init__(self, table, device="cpu"):
        super().__init__()
        self.table = table.to(device)

    @property
    def top(self):
        return self.table.argmax()

    def pick(self, x, m):
        return x[m]  # error: TSL103


class Local(Table):
    def __init__(self, n):
        super().__init__(torch.ones(n), device="cuda")

    def forward(self, x: torch.Tensor):
        return x[self.top] + self.pick(x, x > 0).sum()  # error: TSL303


class Gate(nn.Module):
    def forward(self, x, lim, keep):
        if lim > 0.5:  # ok: the subclass passes a Python float
            return x
        return x[keep]  # error: TSL103
