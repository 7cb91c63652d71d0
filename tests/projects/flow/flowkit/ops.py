import torch

from flowkit.types import Scalar


def same_time(t, t0, y0):
    # unannotated: model.py passes 0-dim CUDA tensors
    if t == t0:  # error: TSL302
        return y0
    return y0 * 2


def same_count(n, m):
    if n == m:  # ok: model.py passes Python ints
        return 0
    return 1


def create_mask(size: int, lengths: torch.Tensor):
    # `size: int`, but model.py passes `lengths.max()`, a 0-dim tensor
    return torch.arange(size, device=lengths.device) < lengths.unsqueeze(-1)  # error: TSL303


def arange_of(size: int, lengths: torch.Tensor):
    return torch.arange(size, device=lengths.device)  # ok: every caller passes a Python int


def assign(scores, boxes):
    if boxes is None:
        return None
    fg = tuple(b > 0 for b in boxes)
    return scores, fg


def positive(x: Scalar):
    # `Scalar` is an alias in another file holding Tensor: maybe a tensor
    if x > 0:  # error: TSL302
        return x
    return 0.0
