import torch

from .consts import HOST


def host_grid(n):
    return torch.arange(n, device=HOST)
