import torch
from torch import nn

from flowkit.solver import Gate, Solver


class Net2(nn.Module):
    def __init__(self):
        super().__init__()
        self.solver = Solver()
        self.gate = Gate()

    def forward(self, x: torch.Tensor):
        y = self.solver.step(x.sum(), x.mean(), x)
        self.solver.count(3, 4)
        return self.gate(y, y > 0)
