import math

import torch
from torch import nn
import torch.nn.functional as F


class Positive(nn.Module):
    """softplus(raw) + lower, with the bound kept as a buffer (it follows the module's device)."""

    def __init__(self, lower=1e-4):
        super().__init__()
        self.register_buffer("lower", torch.tensor(lower))

    def transform(self, raw):
        return F.softplus(raw) + self.lower

    def inverse_transform(self, value):
        value = torch.as_tensor(value)
        if (value <= self.lower).any():  # SYNC
            raise ValueError("value below the constraint's lower bound")
        return value - self.lower + torch.log(-torch.expm1(-(value - self.lower)))


class RBFKernel(nn.Module):
    def __init__(self, ard_dims=1):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1, ard_dims))
        self.constraint = Positive()

    @property
    def lengthscale(self):
        return self.constraint.transform(self.raw_lengthscale)

    @lengthscale.setter
    def lengthscale(self, value):
        self.raw_lengthscale.data.copy_(self.constraint.inverse_transform(value))

    def forward(self, x1, x2, diag=False):
        x1_, x2_ = x1 / self.lengthscale, x2 / self.lengthscale
        if diag:
            return torch.ones(x1.shape[:-1], dtype=x1.dtype, device=x1.device)
        return torch.exp(-0.5 * torch.cdist(x1_, x2_).pow(2))


class ScaleKernel(nn.Module):
    def __init__(self, base):
        super().__init__()
        self.base_kernel = base
        self.raw_outputscale = nn.Parameter(torch.tensor(0.0))
        self.constraint = Positive()

    @property
    def outputscale(self):
        return self.constraint.transform(self.raw_outputscale)

    def forward(self, x1, x2, diag=False):
        return self.outputscale * self.base_kernel(x1, x2, diag=diag)


def log_2pi():
    return math.log(2 * math.pi)
