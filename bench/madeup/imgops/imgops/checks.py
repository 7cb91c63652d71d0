import torch
from torch import Tensor


def check_shape(x: Tensor, shape: list) -> None:
    if "B" in shape:
        if len(x.shape) != len(shape):
            raise TypeError(f"{x.shape} does not match {shape}")


def check_is_tensor(obj, msg=None) -> None:
    if not isinstance(obj, Tensor):
        raise TypeError(msg or f"not a tensor: {type(obj)}")


def check_range(x: Tensor, lo=0.0, hi=1.0, name="input") -> None:
    if (x < lo).any() or (x > hi).any():  # SYNC
        raise ValueError(f"{name} must be in [{lo}, {hi}], got [{x.min()}, {x.max()}]")  # SYNC


def is_probability(x: Tensor, dim=-1, atol=1e-4) -> bool:
    return bool(torch.allclose(x.sum(dim), torch.ones(1, device=x.device), atol=atol))  # SYNC
