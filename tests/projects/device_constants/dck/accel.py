import torch

from .consts import ACCEL


def device_grid(n):
    return torch.arange(n, device=ACCEL)
