import torch
from torch import nn

from flowkit.meters import Meter
from flowkit.ops import arange_of, assign, create_mask, positive, same_count, same_time


class Mean(Meter):
    def value(self):
        return self.total.item()  # error: TSL001


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.meter = Mean("cuda")

    def forward(self, x: torch.Tensor, lengths: torch.Tensor):
        y = same_time(x.sum(), x.mean(), x)
        same_count(3, 4)
        positive(x.sum())
        mask = create_mask(lengths.max(), lengths)
        full = create_mask(x.size(1), lengths)  # another caller passes an int: the tensor still arrives
        ar = arange_of(x.size(1), lengths)
        out = assign(y, [y, y])
        _, fg = out
        if fg[0].any():  # error: TSL302
            pass
        self.meter.update(y)
        self.meter.compute()
        self.meter.value()
        return self.lin(y) * mask.sum() * full.sum() + ar.sum()


class Block(nn.Module):
    def forward(self, x, m, k):
        y = x[m]  # error: TSL103
        if k > 2:  # ok: the caller passes a Python int
            return y
        return y * 2


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x: torch.Tensor):
        return self.block(x, x > 0, 3)
