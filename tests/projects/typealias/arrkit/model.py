import numpy as np
import torch
import torch.nn as nn

from arrkit.ops import crop, host_only, rescale


class Table:
    """A host table that a method moves and moves back: `self.x = self.x.to(...)` keeps a tensor."""

    def __init__(self):
        self.sigmas = torch.from_numpy(np.linspace(0, 1, 10))

    def set_steps(self, device):
        self.sigmas = self.sigmas.to(device)  # error: TSL202
        self.sigmas = self.sigmas.to("cpu")  # error: TSL003


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.table = Table()

    def forward(self, x):
        y = self.lin(x)
        self.table.set_steps(x.device)
        y = rescale(y)
        y = crop(y, y > 0)
        host_only(np.zeros(3), 2, ["a"])
        return y
