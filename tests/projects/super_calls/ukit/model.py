import torch

from ukit.base import Gate, Table


class Remote(Table):
    def __init__(self, table: torch.Tensor):
        super().__init__(table, device="cuda")

    def forward(self, x: torch.Tensor):
        i = self.top
        return x[i]  # error: TSL303


class Half(Gate):
    def forward(self, x: torch.Tensor):
        return super().forward(x, 0.5, x > 0)
