"""Attributes set from a helper's tuple, and a CPU tensor that pins what it is combined with."""

import torch

from .utils import LongTensor


def adjacency(n: int):
    degrees = torch.tensor([1, 2, 3], dtype=torch.long)
    offset = torch.empty(n, dtype=torch.long)
    return degrees, offset


def on_gpu(n: int):
    return torch.zeros(n, device="cuda"), torch.ones(n, device="cuda")


class Sampler:
    def __init__(self, n: int):
        self.degrees, self.offset = adjacency(n)
        self.gpu_degrees, self.gpu_offset = on_gpu(n)

    def sample(self, i: LongTensor, weights_in: LongTensor):
        a = self.degrees[i].item()  # a CPU tensor from the helper's tuple
        b = self.gpu_degrees[i].item()  # error: TSL001
        picked = torch.zeros(self.offset.shape[0], dtype=torch.bool)
        weights = weights_in * picked  # a CPU tensor of rank 1: torch would refuse a CUDA partner
        if torch.sum(weights) == 0:
            a += 1
        scale = weights_in * torch.zeros((), dtype=torch.bool)  # a 0-dim CPU tensor rides along
        if torch.sum(scale) == 0:  # error: TSL302
            a += 1
        return a, b
