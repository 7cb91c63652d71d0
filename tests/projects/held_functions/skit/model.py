from torch import nn

from skit.norm import Norm


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = Norm()

    def forward(self, x):
        y = self.norm(x)
        if self.norm.scale.min() < 1e-3:  # error: TSL302
            y = y * 0
        return y
