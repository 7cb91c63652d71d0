"""A helper whose `size: int` parameter callers in another file fill with a 0-dim tensor."""

import torch


def create_mask(size: int, lengths: torch.Tensor, inverse: bool = False) -> torch.Tensor:
    if inverse:
        return torch.arange(size, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(-1)  # error: TSL303
    return torch.arange(size, device=lengths.device).unsqueeze(0) >= lengths.unsqueeze(-1)  # error: TSL303


def pad_to(size: int, x: torch.Tensor) -> torch.Tensor:
    return x.new_zeros(size)  # every caller passes a Python int
